"""kai-config against Git (KAI-D-005, KAI-D-006) and SchedulingShards Git does not declare (KAI-D-007).

The live objects are what the operator's Config looks like on a cluster; the desired side is the values'
render (tests/checks/test_kai_config.py holds that render to the chart's mapping table).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reconciler.checks.differ import diff
from tests.support.helpers import (
    desired_for,
    kai_crds,
    live_state,
    make_repo,
    obj,
    release_secret,
    run_cli,
    snapshot_file,
    standalone_config,
)

VALUES = "global:\n  gpuSharing: true\noperator:\n  replicaCount: 2\n"


def lab(
    tmp_path: Path, values: str = VALUES, version: str = "v0.16.8", extra: str = "", files: dict[str, str] | None = None
) -> Any:
    return desired_for(
        tmp_path,
        {
            "kai-gitops.yaml": standalone_config(version=version, extra=extra),
            "kai-values.yaml": values,
            **(files or {}),
        },
    )


def kai_config(spec: dict[str, Any]) -> dict[str, Any]:
    return obj("kai.scheduler/v1", "Config", "kai-config", spec=spec)


def shard(name: str) -> dict[str, Any]:
    return obj("kai.scheduler/v1", "SchedulingShard", name, spec={"partitionLabelValue": name})


def config_read() -> dict[str, Any]:
    return {"apiVersion": "kai-gitops/v1", "kind": "KaiConfigRead", "metadata": {"name": "kai-config"}}


def released(*items: dict[str, Any]) -> Any:
    return live_state([*kai_crds(), release_secret(version="v0.16.8"), config_read(), *items])


def rules(findings: list[Any], prefix: str = "KAI-D-00") -> list[str]:
    return [f.rule_id for f in findings if f.rule_id.startswith(prefix) and f.rule_id >= "KAI-D-005"]


def test_a_kai_config_as_git_renders_it_has_no_drift(tmp_path: Path) -> None:
    desired = lab(tmp_path)
    assert rules(diff(desired, released(kai_config(desired.kai_config.spec())))) == []


def test_every_differing_field_in_one_finding_at_the_values_line(tmp_path: Path) -> None:
    desired = lab(tmp_path)
    spec = desired.kai_config.spec()
    spec["admission"]["gpuSharing"] = False  # a hand edit
    spec["global"]["replicaCount"] = 1
    spec["global"]["nodePoolLabelKey"] = "pool.example/x"  # Git leaves it out: the operator default differs
    spec["scheduler"]["replicas"] = 2  # equals global.replicaCount's default: no drift
    findings = [f for f in diff(desired, released(kai_config(spec))) if f.rule_id == "KAI-D-005"]
    assert len(findings) == 1
    finding = findings[0]
    assert finding.desired == {"admission.gpuSharing": True, "global.replicaCount": 2, "global.nodePoolLabelKey": None}
    assert finding.live == {
        "admission.gpuSharing": False,
        "global.replicaCount": 1,
        "global.nodePoolLabelKey": "pool.example/x",
    }
    assert str(finding.location).startswith("kai-values.yaml:4:")  # the first field's value: operator.replicaCount
    assert finding.message == (
        "kai-config differs from Git: global.replicaCount 1 → 2, admission.gpuSharing "
        "false → true, global.nodePoolLabelKey pool.example/x → (operator default)"
    )
    assert [c.where[:17] if c.where else None for c in finding.changes] == [
        "kai-values.yaml:4",
        "kai-values.yaml:2",
        None,
    ]
    patch = {"spec": {"global": {"replicaCount": 2, "nodePoolLabelKey": None}, "admission": {"gpuSharing": True}}}
    assert finding.fix.command == (
        f"kubectl patch configs.kai.scheduler kai-config --type merge -p '{json.dumps(patch, separators=(',', ':'))}'"
    )


def test_a_field_the_pinned_chart_never_renders_is_judged_by_the_operator_default(tmp_path: Path) -> None:
    # v0.14.7 never renders podgrouper.queueLabelKey (KAI#1655): the operator's default is what Git means
    desired = lab(tmp_path, "{}\n", version="v0.14.7")
    spec = desired.kai_config.spec()

    def with_key(key: str) -> dict[str, Any]:
        return kai_config({**spec, "global": {**spec["global"], "queueLabelKey": key}})

    assert rules(diff(desired, released(with_key("kai.scheduler/queue")))) == []
    drifted = diff(desired, released(with_key("team")))
    assert [f.live for f in drifted if f.rule_id == "KAI-D-005"] == [{"global.queueLabelKey": "team"}]


def test_missing_kai_config_while_the_release_is_deployed(tmp_path: Path) -> None:
    desired = lab(tmp_path)
    findings = [f for f in diff(desired, released()) if f.rule_id == "KAI-D-006"]
    assert len(findings) == 1
    assert "post-install hook did not run" in findings[0].message
    assert findings[0].fix.command.startswith("helm upgrade kai-scheduler ")
    assert findings[0].location.file == "kai-gitops.yaml"


def test_missing_kai_config_is_not_reported_when_the_values_manage_it_elsewhere(tmp_path: Path) -> None:
    desired = lab(tmp_path, "kaiConfigDeployer:\n  enabled: false\n", version="v0.17.0")
    assert rules(diff(desired, released())) == []


def test_missing_kai_config_without_a_release_or_without_the_read_is_not_reported(tmp_path: Path) -> None:
    desired = lab(tmp_path)
    assert rules(diff(desired, live_state([*kai_crds(), config_read()]))) == []
    assert rules(diff(desired, live_state([*kai_crds(), release_secret(version="v0.16.8")]))) == []


def test_missing_kai_config_kept_in_git_is_applied_from_its_file(tmp_path: Path) -> None:
    manifest = "apiVersion: kai.scheduler/v1\nkind: Config\nmetadata:\n  name: kai-config\nspec: {}\n"
    desired = lab(tmp_path, extra="    kaiManifestFiles: [kai/config.yaml]\n", files={"kai/config.yaml": manifest})
    [finding] = [f for f in diff(desired, released()) if f.rule_id == "KAI-D-006"]
    assert finding.fix.command == "kubectl apply -f kai/config.yaml"


def test_shards_git_does_not_declare_are_reported_not_deleted(tmp_path: Path) -> None:
    manifest = (
        "apiVersion: kai.scheduler/v1\nkind: SchedulingShard\nmetadata:\n  name: team-a\n"
        "spec: {partitionLabelValue: team-a}\n"
    )
    desired = lab(tmp_path, extra="    kaiManifestFiles: [kai/shards.yaml]\n", files={"kai/shards.yaml": manifest})
    live = released(kai_config(desired.kai_config.spec()), shard("default"), shard("team-a"), shard("team-b"))
    findings = [f for f in diff(desired, live) if f.rule_id == "KAI-D-007"]
    assert [f.subject.name for f in findings] == ["team-b"]
    assert findings[0].message == (
        "SchedulingShard team-b exists but Git does not declare it; it is reported, never deleted"
    )
    assert findings[0].fix.action.value == "none" and "delete" not in (findings[0].fix.command or "")


def test_cli_diff_names_each_kai_config_rule(tmp_path: Path) -> None:
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": standalone_config(version="v0.16.8"), "kai-values.yaml": VALUES})
    desired = lab(tmp_path / "copy")
    spec = desired.kai_config.spec()
    spec["admission"]["gpuSharing"] = False
    snapshot = snapshot_file(
        tmp_path,
        [
            *kai_crds(),
            release_secret(version="v0.16.8"),
            config_read(),
            kai_config(spec),
            shard("default"),
            shard("stray"),
        ],
    )
    code, stdout, _ = run_cli(["diff", "--repo", repo, "--snapshot", snapshot])
    assert code == 2
    assert "kai-config differs from Git: admission.gpuSharing false → true" in stdout
    assert "SchedulingShard stray exists but Git does not declare it" in stdout
    missing = snapshot_file(tmp_path, [*kai_crds(), release_secret(version="v0.16.8"), config_read()], name="missing")
    code, stdout, _ = run_cli(["diff", "--repo", repo, "--snapshot", missing])
    assert code == 2 and "kai-config does not exist while the KAI release is deployed" in stdout


def test_a_value_that_looks_like_a_credential_is_left_to_the_operator_redacted(tmp_path: Path) -> None:
    desired = lab(
        tmp_path, 'global:\n  priorityClassName: "--token=s3cr3t-t0ken-value-1234567890"\n', version="v0.17.0"
    )
    spec = desired.kai_config.spec()
    spec["global"]["priorityClassName"] = "kai-high"
    [finding] = [f for f in diff(desired, released(kai_config(spec))) if f.rule_id == "KAI-D-005"]
    assert finding.fix.action.value == "none" and finding.fix.patch is None  # a plan never carries it
    assert "s3cr3t" not in (finding.fix.command or "") and "s3cr3t" not in finding.message
    assert "s3cr3t" not in json.dumps(finding.desired)
