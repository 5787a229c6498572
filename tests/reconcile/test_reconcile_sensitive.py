"""Self-heal leaves security-sensitive kai-config fields (KAI-S-001) to a person unless the cluster's
allowSensitiveWrites names them: an operator item in the plan, the drift still a finding, and the write guard
refusing such a patch on its own."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.model.sensitive import SensitiveAllow
from reconciler.reconcile.allowed_writes import MERGE_PATCH, WriteForbidden, check_sensitive, check_write
from tests.support.helpers import assert_one_line_error, commit_files
from tests.support.reconcile_kai_config import CONFIG_PATH, GOLDEN, stored_spec
from tests.support.reconcile_support import DEMO, Demo, demo_cluster

IMAGE = ("spec", "admission", "service", "image", "repository")
SECURITY = ("spec", "global", "securityContext")
ALLOW = (
    "    allowSensitiveWrites:\n"
    "      - {object: Config/kai-config, path: spec.admission.service.image.repository}\n"
    "      - {object: Config/kai-config, path: spec.global.securityContext}\n"
)


def hand_edited() -> dict[str, Any]:
    spec = copy.deepcopy(GOLDEN)
    spec["admission"]["gpuSharing"] = True  # not sensitive: self-heal undoes it
    spec["admission"]["service"]["image"]["repository"] = "evil.example/kai"
    spec["global"]["securityContext"] = {**spec["global"]["securityContext"], "privileged": True}
    return spec


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Demo]:
    monkeypatch.setenv("KAI_GITOPS_LEASE_DURATION_S", "2")
    items = [
        *[i for i in DEMO.prod_addon_snapshot() if i["kind"] != "Config"],
        {"apiVersion": "kai.scheduler/v1", "kind": "Config", "metadata": {"name": "kai-config"}, "spec": hand_edited()},
    ]
    yield from demo_cluster(tmp_path, items)


def config_fields(plan: dict[str, Any]) -> set[str]:
    return {".".join(f["path"]) for c in plan["changes"] if c["object"]["kind"] == "Config" for f in c["fields"]}


def test_self_heal_leaves_an_image_repository_and_privilege_to_a_person(demo: Demo) -> None:
    code, report, err = demo.reconcile_json()
    assert code == 2, err
    assert config_fields(report["plan"]) == {"spec.admission.gpuSharing"}
    [person] = [o for o in report["plan"]["operator"] if o["rule"] == "KAI-S-001"]
    assert person["subject"]["name"] == "kai-config"
    assert person["description"] == (
        "Config kai-config: spec.global.securityContext, spec.admission.service.image.repository are "
        "security-sensitive (KAI-S-001), left to a person; to let self-heal write a field, name it in the cluster's "
        "allowSensitiveWrites"
    )
    assert person["command"].startswith("kubectl patch configs.kai.scheduler kai-config --type merge -p ")
    assert '"repository":"ghcr.io/kai-scheduler/kai-scheduler"' in person["command"]
    [drift] = [f for f in report["findings"] if f["rule"] == "KAI-D-005"]  # still a finding
    assert (
        "admission.service.image.repository evil.example/kai → ghcr.io/kai-scheduler/kai-scheduler" in drift["message"]
    )

    code, applied, err = demo.reconcile_json("--apply")
    assert applied["apply"]["ok"], err
    stored = stored_spec(demo)
    assert stored["admission"]["gpuSharing"] is False
    assert stored["admission"]["service"]["image"]["repository"] == "evil.example/kai"
    assert stored["global"]["securityContext"]["privileged"] is True
    assert [r.query.get("dryRun") for r in demo.writes() if r.path == CONFIG_PATH] == ["All", None]

    code, again, _ = demo.reconcile_json()
    assert config_fields(again["plan"]) == set()
    assert [o["rule"] for o in again["plan"]["operator"] if o["subject"] and o["subject"]["kind"] == "Config"] == [
        "KAI-S-001"
    ]
    assert "KAI-D-005" in {f["rule"] for f in again["findings"]}


def test_allowed_by_path_self_heal_writes_them(demo: Demo) -> None:
    config = (demo.repo / "kai-gitops.yaml").read_text()
    allowed = config.replace(
        "    environmentFile: environments/prod.yaml\n", "    environmentFile: environments/prod.yaml\n" + ALLOW, 1
    )
    commit_files(demo.repo, {"kai-gitops.yaml": allowed}, "allow two sensitive fields")
    code, report, err = demo.reconcile_json()
    assert code == 2, err
    assert config_fields(report["plan"]) == {"spec.admission.gpuSharing", ".".join(IMAGE), ".".join(SECURITY)}
    assert not [o for o in report["plan"]["operator"] if o["rule"] == "KAI-S-001"]
    code, applied, err = demo.reconcile_json("--apply")
    assert applied["apply"]["ok"], err
    assert stored_spec(demo) == GOLDEN


def test_a_saved_plan_made_while_allowed_is_refused_once_the_entry_is_gone(demo: Demo, tmp_path: Path) -> None:
    config = (demo.repo / "kai-gitops.yaml").read_text()
    allowed = config.replace(
        "    environmentFile: environments/prod.yaml\n", "    environmentFile: environments/prod.yaml\n" + ALLOW, 1
    )
    commit_files(demo.repo, {"kai-gitops.yaml": allowed}, "allow two sensitive fields")
    plan = tmp_path / "plan.json"
    code, _, err = demo.reconcile("--plan-out", plan)
    saved = json.loads(plan.read_text())
    assert code == 2 and list(IMAGE) in [f["path"] for c in saved["changes"] for f in c["fields"]], err
    commit_files(demo.repo, {"kai-gitops.yaml": config}, "no longer")
    code, out, err = demo.reconcile("--plan", plan, "--apply")
    assert_one_line_error(code, out, err, "is not a change the repository backs now", "nothing was applied")
    assert stored_spec(demo)["admission"]["service"]["image"]["repository"] == "evil.example/kai"


def test_the_write_guard_refuses_a_sensitive_field_no_entry_names() -> None:
    """The session's guard (check_write) holds every write to the table; the plan writer adds the cluster's
    allowSensitiveWrites (check_sensitive), which only the plan's cluster knows."""
    body = {"spec": {"admission": {"service": {"image": {"repository": "evil.example/kai"}}}}}
    check_write("PATCH", CONFIG_PATH, body, MERGE_PATCH)  # a field the table lists
    with pytest.raises(WriteForbidden, match=r"spec\.admission\.service\.image\.repository is security-sensitive"):
        check_sensitive("PATCH", CONFIG_PATH, body, ())
    check_sensitive("PATCH", CONFIG_PATH, body, (SensitiveAllow("Config", "kai-config", IMAGE),))
    with pytest.raises(WriteForbidden, match="securityContext is security-sensitive"):
        check_sensitive(
            "PATCH",
            CONFIG_PATH,
            {"spec": {"global": {"securityContext": {"privileged": True}}}},
            (SensitiveAllow("Config", "kai-config", IMAGE),),
        )
    check_sensitive("PATCH", CONFIG_PATH, {"spec": {"admission": {"gpuSharing": False}}}, ())


def test_a_malformed_allow_entry_is_one_line_naming_its_place(tmp_path: Path) -> None:
    from tests.support.helpers import make_repo, run_cli, standalone_config

    bad = standalone_config(extra="    allowSensitiveWrites:\n      - {object: Secret/x, path: data.token}\n")
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": bad, "kai-values.yaml": "{}\n"})
    code, out, err = run_cli(["check", "--repo", str(repo)])
    line = bad.splitlines().index("      - {object: Secret/x, path: data.token}") + 1
    assert_one_line_error(code, out, err, f"kai-gitops.yaml:{line}:10", "allowSensitiveWrites.0.object")
