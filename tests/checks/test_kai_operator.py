"""kai-config synced but not acted on (KAI-O-001) and Helm hook annotations left on it (KAI-O-002).

Conditions as the KAI operator's status reconciler writes them (KAI-Scheduler
pkg/operator/controller/status_reconciler at each tag): v0.10.0-v0.12.15 keep Reconciling True with reason
`reconciled` on every pass and write no Ready condition; later versions write all five.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reconciler.checks.kai_operator import kai_operator_findings
from tests.support.helpers import kai_crds, live_state, obj, release_secret, run_cli, snapshot_file

MODERN = [
    ("Reconciling", "False", "reconciled", "Reconciliation completed successfully"),
    ("Deployed", "True", "deployed", "Resources deployed"),
    ("Available", "True", "available", "System available"),
    ("DependenciesFulfilled", "True", "dependencies_fulfilled", "Dependencies are fulfilled"),
    ("Ready", "True", "ready", "System is ready"),
]
# v0.10.5 / v0.12.13: Reconciling always True, no Ready
OLD = [("Reconciling", "True", "reconciled", "Reconciliation completed successfully"), *MODERN[1:4]]


def config(
    conditions: list[tuple[str, str, str, str]],
    *,
    generation: int = 3,
    observed: int = 3,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    item = obj(
        "kai.scheduler/v1",
        "Config",
        "kai-config",
        spec={},
        status={
            "conditions": [
                {"type": t, "status": s, "reason": r, "message": m, "observedGeneration": observed}
                for t, s, r, m in conditions
            ]
        },
    )
    item["metadata"]["generation"] = generation
    if annotations:
        item["metadata"]["annotations"] = annotations
    return item


def findings(version: str, item: dict[str, Any]) -> list[Any]:
    return kai_operator_findings(live_state([*kai_crds(), release_secret(version=version), item]), None, "live")


@pytest.mark.parametrize("version", ["v0.12.23", "v0.13.4", "v0.14.7", "v0.16.8", "v0.17.0"])
def test_healthy_conditions_of_current_operators(version: str) -> None:
    assert findings(version, config(MODERN)) == []


@pytest.mark.parametrize("version", ["v0.10.5", "v0.12.13"])
def test_reconciling_true_and_no_ready_mean_nothing_on_v0_10_to_v0_12_15(version: str) -> None:
    assert findings(version, config(OLD)) == []
    [f] = findings("v0.12.23", config(OLD))  # the same conditions from a v0.12.16+ operator are not healthy
    assert f.rule_id == "KAI-O-001" and "Reconciling=True" in f.message and "no Ready condition" in f.message


def test_an_operand_not_available_is_named_with_the_operators_message() -> None:
    conditions = [
        c if c[0] != "Available" else ("Available", "False", "available", "Binder: not available") for c in MODERN
    ]
    [f] = findings("v0.16.8", config(conditions))
    assert f.message == (
        "kai-config is not reconciled by the KAI operator: Available=False (available: Binder: not available)"
    )
    assert f.fix.command.startswith("kubectl get configs.kai.scheduler kai-config -o jsonpath=")


def test_a_generation_the_operator_has_not_seen() -> None:
    [f] = findings("v0.17.0", config(MODERN, generation=4, observed=3))
    assert "Deployed is for generation 3, the spec is at 4" in f.message


def test_no_conditions_at_all() -> None:
    [f] = findings("v0.16.8", config([]))
    assert "no status conditions (is the kai-operator Deployment running?)" in f.message


def test_hook_annotations_left_by_a_pre_hook_chart_after_an_upgrade_to_a_deployer_chart() -> None:
    hooked = config(MODERN, annotations={"helm.sh/hook": "pre-install,pre-upgrade", "helm.sh/hook-weight": "3"})
    [f] = findings("v0.16.8", hooked)
    assert f.rule_id == "KAI-O-002"
    assert f.fix.command.endswith(
        "kubectl annotate configs.kai.scheduler kai-config helm.sh/hook- helm.sh/hook-weight-"
    )
    assert findings("v0.14.5", hooked) == []  # a pre-hook chart itself: the annotations are its own


def test_doctor_needs_no_git_to_report_them(tmp_path: Path) -> None:
    conditions = [
        c if c[0] != "Deployed" else ("Deployed", "False", "deployed", "KAIAdmission: not deployed") for c in MODERN
    ]
    snapshot = snapshot_file(tmp_path, [*kai_crds(), release_secret(version="v0.16.8"), config(conditions)])
    code, out, _ = run_cli(["doctor", "--snapshot", snapshot])
    assert code == 2
    assert (
        "kai-config is not reconciled by the KAI operator: Deployed=False (deployed: KAIAdmission: not deployed)" in out
    )


# -- what the operator deployed -------------------------------------------------------------------------------

UID = "11111111-2222-3333-4444-555555555555"


def deployment(
    name: str, *, available: int = 1, updated: int = 1, owner_uid: str = UID, owner_kind: str = "Config"
) -> dict[str, Any]:
    owner = {"kind": owner_kind, "name": "kai-config" if owner_kind == "Config" else "default", "uid": owner_uid}
    return obj(
        "apps/v1",
        "Deployment",
        name,
        "kai-scheduler",
        metadata={"ownerReferences": [owner]},
        spec={"replicas": 1},
        status={"updatedReplicas": updated, "availableReplicas": available},
    )


def with_uid(item: dict[str, Any]) -> dict[str, Any]:
    item["metadata"]["uid"] = UID
    return item


def pod_using(name: str, account: str, started: str) -> dict[str, Any]:
    return obj(
        "v1",
        "Pod",
        name,
        "kai-scheduler",
        spec={"serviceAccountName": account, "schedulerName": "x"},
        status={"phase": "Running", "startTime": started},
    )


def account(name: str, created: str) -> dict[str, Any]:
    return obj("v1", "ServiceAccount", name, "kai-scheduler", metadata={"creationTimestamp": created})


def operator_findings(*items: dict[str, Any]) -> list[Any]:
    live = live_state([*kai_crds(), release_secret(version="v0.16.8"), with_uid(config(MODERN)), *items])
    return [f for f in kai_operator_findings(live, None, "live") if f.rule_id != "KAI-O-001"]


def test_operands_up_and_owned_by_the_current_kai_config_are_fine() -> None:
    assert (
        operator_findings(
            deployment("binder"),
            deployment("kai-scheduler-default", owner_kind="SchedulingShard"),
            obj("apps/v1", "Deployment", "kai-operator", "kai-scheduler", spec={"replicas": 1}),
        )
        == []
    )


def test_an_operand_not_available() -> None:
    [f] = operator_findings(deployment("binder", available=0, updated=1))
    assert (f.rule_id, f.message) == ("KAI-O-003", "Deployment kai-scheduler/binder: 0/1 available, 1 updated")
    assert f.fix.command == "kubectl -n kai-scheduler describe deployment binder"


def test_an_operand_owned_by_a_deleted_kai_config() -> None:
    [f] = operator_findings(deployment("admission", owner_uid="99999999-0000-0000-0000-000000000000"))
    assert f.message == (
        "Deployment kai-scheduler/admission: owned by kai-config UID "
        f"99999999-0000-0000-0000-000000000000, not the current {UID}"
    )


def test_pods_started_before_their_service_account_was_re_created_get_the_restart_command() -> None:
    findings = operator_findings(
        account("scheduler", "2026-10-01T09:00:00Z"),
        account("binder", "2026-10-01T07:00:00Z"),
        pod_using("kai-scheduler-default-7d9f5-abcde", "scheduler", "2026-10-01T08:00:00Z"),
        pod_using("binder-5c6b8-xyz12", "binder", "2026-10-01T08:00:00Z"),
    )
    [f] = findings
    assert f.rule_id == "KAI-O-004" and "before its ServiceAccount scheduler was created" in f.message
    assert f.fix.command == "kubectl -n kai-scheduler rollout restart deployment/kai-scheduler-default"


def test_a_failed_deployer_job() -> None:
    job = obj(
        "batch/v1",
        "Job",
        "kai-config-deployer",
        "kai-scheduler",
        status={"conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}]},
    )
    [f] = operator_findings(job)
    assert f.rule_id == "KAI-O-005" and "failed (BackoffLimitExceeded)" in f.message
    assert f.fix.command == "kubectl -n kai-scheduler logs job/kai-config-deployer"
    running = obj("batch/v1", "Job", "kai-config-deployer", "kai-scheduler", status={"conditions": []})
    assert operator_findings(running) == []


def lease(renewed: str, duration: int = 15) -> dict[str, Any]:
    return obj(
        "coordination.k8s.io/v1",
        "Lease",
        "kai-scheduler",
        "kai-scheduler",
        spec={"holderIdentity": "kai-scheduler-default-7d9f", "leaseDurationSeconds": duration, "renewTime": renewed},
    )


def test_the_schedulers_leader_lease_not_renewed() -> None:
    from datetime import UTC, datetime

    now = datetime(2026, 10, 1, 9, 0, 0, tzinfo=UTC)
    stale = live_state([*kai_crds(), with_uid(config(MODERN)), lease("2026-10-01T08:58:00.000000Z")], now=now)
    [f] = [f for f in kai_operator_findings(stale, None, "live") if f.rule_id == "KAI-O-006"]
    assert (
        f.message == "Lease kai-scheduler/kai-scheduler was last renewed 120 s ago (its duration is 15 s): "
        "no scheduler leads"
    )
    assert f.fix.command.endswith("rollout restart deployment/kai-scheduler-default")
    fresh = live_state([*kai_crds(), with_uid(config(MODERN)), lease("2026-10-01T08:59:55.000000Z")], now=now)
    assert [f for f in kai_operator_findings(fresh, None, "live") if f.rule_id == "KAI-O-006"] == []
    other = live_state(
        [
            *kai_crds(),
            {
                **lease("2026-10-01T08:00:00.000000Z"),
                "metadata": {"name": "kai-gitops-reconcile", "namespace": "kai-gitops"},
            },
        ],
        now=now,
    )
    assert other.scheduler_lease is None


def test_doctor_lists_each_kai_check_passed_or_failed_with_evidence_and_fix(tmp_path: Path) -> None:
    items = [
        *kai_crds(),
        release_secret(version="v0.16.8"),
        with_uid(config(MODERN)),
        deployment("binder", available=0, updated=1),
        deployment("admission"),
    ]
    code, out, _ = run_cli(["doctor", "--snapshot", snapshot_file(tmp_path, items)])
    assert code == 2
    section = out.split("KAI (kai-config and what the operator deployed):\n", 1)[1].split("\n\n", 1)[0]
    assert section.splitlines() == [
        "  ✓ kai-config reconciled by the KAI operator KAI-O-001",
        "  ✓ kai-config carries no Helm hook annotation KAI-O-002",
        "  ✗ KAI operands available and owned by the current kai-config KAI-O-003",
        "      Deployment kai-scheduler/binder: 0/1 available, 1 updated",
        "      run: kubectl -n kai-scheduler describe deployment binder",
        "  ✓ KAI pods started after their ServiceAccount was created KAI-O-004",
        "  ✓ kai-config-deployer Job did not fail KAI-O-005",
        "  ✓ KAI scheduler's leader Lease renewed KAI-O-006",
        "  ✓ SchedulingShards reconciled by the KAI operator KAI-O-007",
        "  ✓ KAI scheduler not restarted by a 401 after a ServiceAccount change KAI-O-008",
    ]  # KAI-O-009 needs Git


# -- SchedulingShards (their conditions are the shard operand's, written as for kai-config) --------------------


def shard(
    name: str, conditions: list[tuple[str, str, str, str]], *, generation: int = 2, observed: int = 2
) -> dict[str, Any]:
    item = config(conditions, generation=generation, observed=observed)
    item["kind"], item["metadata"]["name"] = "SchedulingShard", name
    return item


def shard_findings(version: str, *shards: dict[str, Any]) -> list[Any]:
    live = live_state([*kai_crds(), release_secret(version=version), with_uid(config(MODERN)), *shards])
    return [f for f in kai_operator_findings(live, None, "live") if f.rule_id == "KAI-O-007"]


def test_every_shard_with_stale_or_not_ready_conditions_is_named() -> None:
    not_ready = [c if c[0] != "Ready" else ("Ready", "False", "not_ready", "System not ready") for c in MODERN]
    found = shard_findings(
        "v0.17.0",
        shard("default", MODERN, generation=5, observed=4),
        shard("gpu-pool", not_ready),
        shard("cpu-pool", MODERN),
    )
    assert [f.message for f in found] == [
        "SchedulingShard default is not reconciled by the KAI operator: Deployed is for generation 4, the spec is "
        "at 5; Available is for generation 4, the spec is at 5; DependenciesFulfilled is for generation 4, the "
        "spec is at 5; Reconciling is for generation 4, the spec is at 5; Ready is for generation 4, the spec is "
        "at 5",
        "SchedulingShard gpu-pool is not reconciled by the KAI operator: Ready=False (not_ready: System not ready)",
    ]
    assert found[0].fix.command.startswith("kubectl get schedulingshards.kai.scheduler default -o jsonpath=")


def test_shard_conditions_read_per_era() -> None:
    assert shard_findings("v0.12.13", shard("default", OLD)) == []  # Reconciling always True, no Ready
    [f] = shard_findings("v0.13.4", shard("default", OLD))
    assert "Reconciling=True" in f.message and "no Ready condition" in f.message
    assert shard_findings("v0.9.20", shard("default", [])) == []  # no shard operand writes status there


# -- the scheduler's exit on 401 (v0.17.0+, KAI-Scheduler #1823) -------------------------------------------------


def scheduler_pod(restarted_at: str | None, started: str = "2026-10-01T08:00:00Z") -> dict[str, Any]:
    pod = pod_using("kai-scheduler-default-7d9f5-abcde", "scheduler", started)
    status = {"name": "scheduler", "restartCount": 0, "lastState": {}}
    if restarted_at:
        status = {
            "name": "scheduler",
            "restartCount": 1,
            "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": restarted_at}},
        }
    pod["status"]["containerStatuses"] = [status]
    return pod


def rules_for(version: str, *items: dict[str, Any]) -> list[tuple[str, str]]:
    live = live_state(
        [
            *kai_crds(),
            release_secret(version=version),
            with_uid(config(MODERN)),
            account("scheduler", "2026-10-01T09:00:00Z"),
            *items,
        ]
    )
    return [(f.rule_id, f.message) for f in kai_operator_findings(live, None, "live") if f.rule_id != "KAI-O-001"]


def test_a_v0_17_scheduler_restarted_after_its_service_account_was_re_created_recovered_from_the_401() -> None:
    [(rule, message)] = rules_for("v0.17.0", scheduler_pod("2026-10-01T09:00:07Z"))
    assert rule == "KAI-O-008"  # and not KAI-O-004: the restart gave it a token of the new account
    assert message == (
        "pod kai-scheduler/kai-scheduler-default-7d9f5-abcde: container scheduler ended at "
        "2026-10-01T09:00:07Z and was restarted (1 restarts), after its ServiceAccount scheduler was "
        "re-created at 2026-10-01T09:00:00Z: the 401 window happened and the restart recovered it"
    )


def test_no_restart_after_the_re_creation_is_still_the_401_window() -> None:
    assert [r for r, _ in rules_for("v0.17.0", scheduler_pod(None))] == ["KAI-O-004"]
    assert [r for r, _ in rules_for("v0.17.0", scheduler_pod("2026-10-01T08:30:00Z"))] == ["KAI-O-004"]
    # a pod started after the re-creation had a good token: its restart is something else
    assert rules_for("v0.17.0", scheduler_pod("2026-10-01T09:30:00Z", started="2026-10-01T09:10:00Z")) == []


def test_before_v0_17_the_scheduler_does_not_exit_on_401_so_only_the_window_is_reported() -> None:
    assert [r for r, _ in rules_for("v0.16.8", scheduler_pod("2026-10-01T09:00:07Z"))] == ["KAI-O-004"]


def test_doctor_shows_the_recovered_401_window(tmp_path: Path) -> None:
    items = [
        *kai_crds(),
        release_secret(version="v0.17.0"),
        with_uid(config(MODERN)),
        account("scheduler", "2026-10-01T09:00:00Z"),
        scheduler_pod("2026-10-01T09:00:07Z"),
    ]
    code, out, err = run_cli(["doctor", "--snapshot", snapshot_file(tmp_path, items)])
    assert code == 2, err
    section = out.split("KAI (kai-config and what the operator deployed):\n", 1)[1].split("\n\n", 1)[0]
    assert "  ✓ KAI pods started after their ServiceAccount was created KAI-O-004" in section
    assert "  ✗ KAI scheduler not restarted by a 401 after a ServiceAccount change KAI-O-008" in section
    assert (
        "      run: kubectl -n kai-scheduler logs kai-scheduler-default-7d9f5-abcde -c scheduler --previous "
        "--tail=20; kubectl get configs.kai.scheduler kai-config -o jsonpath='{.metadata.creationTimestamp}'" in section
    )


# -- E3 render mode over a kai-config Helm does not own (v0.17.0 kaiConfig.render) ----------------------------

RENDER_VALUES = "kaiConfigDeployer:\n  enabled: false\nkaiConfig:\n  render: true\n"
HELM_OWNED = {"meta.helm.sh/release-name": "kai-scheduler", "meta.helm.sh/release-namespace": "kai-scheduler"}


def helm_rule_findings(tmp_path: Path, values: str, item: dict[str, Any]) -> list[Any]:
    from tests.support.helpers import desired_for, standalone_config

    desired = desired_for(
        tmp_path, {"kai-gitops.yaml": standalone_config(version="v0.17.0"), "kai-values.yaml": values}
    )
    live = live_state([*kai_crds(), release_secret(version="v0.16.8"), item])
    return [f for f in kai_operator_findings(live, desired, "lab") if f.rule_id == "KAI-O-009"]


def test_render_mode_over_a_kai_config_without_helm_ownership_metadata(tmp_path: Path) -> None:
    [f] = helm_rule_findings(tmp_path, RENDER_VALUES, config(MODERN))  # as the deployer Job applied it
    assert f.message == (
        "kaiConfig.render renders kai-config into the Helm release, but the live one has no annotation "
        "meta.helm.sh/release-name, no annotation meta.helm.sh/release-namespace, no label "
        'app.kubernetes.io/managed-by: Helm 3 refuses to adopt it ("invalid ownership metadata") and the install '
        "or upgrade fails"
    )
    assert f.fix.command == (
        "kubectl annotate configs.kai.scheduler kai-config --overwrite meta.helm.sh/release-name=kai-scheduler "
        "meta.helm.sh/release-namespace=kai-scheduler; kubectl label configs.kai.scheduler kai-config --overwrite "
        "app.kubernetes.io/managed-by=Helm"
    )


def test_a_kai_config_helm_owns_or_no_render_mode_is_fine(tmp_path: Path) -> None:
    owned = config(MODERN, annotations=HELM_OWNED)
    owned["metadata"]["labels"] = {"app.kubernetes.io/managed-by": "Helm"}
    assert helm_rule_findings(tmp_path / "owned", RENDER_VALUES, owned) == []
    assert helm_rule_findings(tmp_path / "deployer", "{}\n", config(MODERN)) == []  # E2 default: the Job applies it
    other = config(MODERN, annotations={**HELM_OWNED, "meta.helm.sh/release-name": "kai"})
    other["metadata"]["labels"] = {"app.kubernetes.io/managed-by": "Helm"}
    [f] = helm_rule_findings(tmp_path / "other", RENDER_VALUES, other)
    assert "annotation meta.helm.sh/release-name='kai' (not kai-scheduler)" in f.message


def test_doctor_with_git_shows_the_adoption_check(tmp_path: Path) -> None:
    from tests.support.helpers import make_repo, standalone_config

    repo, _ = make_repo(
        tmp_path / "repo", {"kai-gitops.yaml": standalone_config(version="v0.17.0"), "kai-values.yaml": RENDER_VALUES}
    )
    snapshot = snapshot_file(tmp_path, [*kai_crds(), release_secret(version="v0.16.8"), config(MODERN)])
    code, out, err = run_cli(["doctor", "--repo", repo, "--snapshot", snapshot])
    assert code == 2, err
    section = out.split("KAI (kai-config and what the operator deployed):\n", 1)[1].split("\n\n", 1)[0]
    assert "  ✗ kai-config adoptable by Helm in render mode KAI-O-009" in section
    assert "run: kubectl annotate configs.kai.scheduler kai-config --overwrite meta.helm.sh/release-name=" in section
