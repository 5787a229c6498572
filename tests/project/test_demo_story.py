"""The demo tells the whole story of its drift (`make demo`): what drifted, which field manager set it and, from the
demo's audit log, which person wrote it and when. The committed demo files are exactly what
repo-templates/demo/build.py writes, on every run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import DEMO, DEMO_SNAPSHOTS, load_demo_builder, run_cli

AUDIT_LOG = DEMO / "audit.log"
BUILD = load_demo_builder()


@pytest.fixture(scope="module")
def demo_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("demo") / "repo"
    BUILD.build_repo(target)
    return target


def _diff(repo: Path, *extra: Any) -> tuple[int, str, str]:
    return run_cli(
        [
            "diff",
            "--repo",
            repo,
            "--cluster",
            "prod-addon",
            "--snapshot",
            DEMO_SNAPSHOTS / "prod-addon.yaml",
            "--k8s-audit-log",
            AUDIT_LOG,
            *extra,
        ]
    )


def _findings(repo: Path) -> dict[tuple[str, str], dict[str, Any]]:
    code, out, err = _diff(repo, "-o", "json")
    assert code == 2, err
    return {(f["rule"], f["subject"]["name"]): f for f in json.loads(out)["findings"] if f.get("subject")}


def test_committed_demo_files_are_what_build_writes_byte_for_byte(tmp_path: Path) -> None:
    for run in ("first", "second"):
        BUILD.write_snapshots(tmp_path / run)
        BUILD.write_audit_log(tmp_path / run / "audit.log")
        for name in ("prod-addon.yaml", "lab-standalone.yaml"):
            assert (tmp_path / run / name).read_bytes() == (DEMO_SNAPSHOTS / name).read_bytes(), (
                "regenerate: python repo-templates/demo/build.py snapshots repo-templates/demo/snapshots"
            )
        assert (tmp_path / run / "audit.log").read_bytes() == AUDIT_LOG.read_bytes(), (
            "regenerate: python repo-templates/demo/build.py audit-log repo-templates/demo/audit.log"
        )


def test_demo_audit_log_is_audit_events_as_the_api_server_writes_them() -> None:
    events = [json.loads(line) for line in AUDIT_LOG.read_text().splitlines()]
    assert {(e["kind"], e["apiVersion"]) for e in events} == {("Event", "audit.k8s.io/v1")}
    by_id: dict[str, list[str]] = {}
    for e in events:
        by_id.setdefault(e["auditID"], []).append(e["stage"])
    assert all(stages == ["RequestReceived", "ResponseComplete"] for stages in by_id.values())
    stamps = [e["stageTimestamp"] for e in events]
    assert stamps == sorted(stamps)


def test_queues_name_the_helm_revision_that_set_them(demo_repo: Path) -> None:
    findings = _findings(demo_repo)
    for queue in ("default-parent-queue", "default-queue"):
        attribution = {a["field"]: a for a in findings[("KAI-D-002", queue)]["attribution"]}
        assert set(attribution) == {"cpu.quota", "gpu.quota", "memory.quota"}
        cpu = attribution["cpu.quota"]
        assert (cpu["manager"], cpu["operation"], cpu["time"]) == ("helm", "Update", "2026-10-01T08:00:00Z")
        assert cpu["helmRelease"] == {
            "name": "kai-scheduler",
            "namespace": "kai-scheduler",
            "revision": 1,
            "status": "superseded",
            "lastDeployed": "2026-10-01T07:59:58.482903117Z",
        }
        assert findings[("KAI-D-002", queue)].get("lastWrite") is None  # the log starts after Helm created them


def test_kai_config_names_kubectl_edit_and_the_person_behind_it(demo_repo: Path) -> None:
    finding = _findings(demo_repo)[("KAI-D-005", "kai-config")]
    [attribution] = finding["attribution"]
    assert attribution == {
        "field": "admission.gpuSharing",
        "manager": "kubectl-edit",
        "operation": "Update",
        "subresource": None,
        "time": "2026-11-30T14:02:11Z",
    }
    write = finding["lastWrite"]
    assert (write["user"], write["identity"], write["verb"]) == ("alice@example.com", "person", "patch")
    assert write["time"].startswith("2026-11-30T14:02:11")  # the operator's later status write is no write


def test_node_label_names_kubectl_label(demo_repo: Path) -> None:
    [label] = _findings(demo_repo)[("NVCA-S-012", "gpu-node-2")]["attribution"]
    assert (label["manager"], label["time"]) == ("kubectl-label", "2026-11-24T09:41:37Z")


def test_demo_text_says_who_and_when_with_the_person_standing_out(demo_repo: Path) -> None:
    code, out, err = _diff(demo_repo)
    assert code == 2, err
    # One writer set all three fields of a queue: said once under them, not on each line.
    assert (
        "memory.quota           0 → -1\n      each last set by helm (Update) 2026-10-01 08:00 UTC — Helm release "
        "kai-scheduler/kai-scheduler revision 1 (superseded, deployed 2026-10-01 07:59 UTC)"
    ) in out
    assert out.count("each last set by helm") == 2
    # The message gave the values; the attribution line names the field only.
    assert (
        "kai-config differs from Git: admission.gpuSharing true → false\n"
        "      admission.gpuSharing, last set by kubectl-edit (Update) 2026-11-30 14:02 UTC"
    ) in out
    assert "⚠ last written by alice@example.com (person)" in out
    assert out.count("⚠ last written by") == 1
