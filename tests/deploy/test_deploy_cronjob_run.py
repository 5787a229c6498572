"""The CronJob's command, run the way the kubelet would run it, against the demo cluster.

The rendered container's args and env are taken as they are: `$(VAR)` is expanded from the env, whose
values come from ConfigMap kai-gitops-settings (its pushgateway URL pointed at a local stand-in) and
from Secret kai-gitops-git (a file:// clone URL and a planted token). The pod's mount paths are mapped
to temp dirs, and KUBECONFIG stands in for the in-cluster service account. The API server answers the
default RBAC's 403 for the cluster-wide Secret list. Not modelled: the image itself, the kubelet's
`$$` escaping, the OPA sidecar (see tests/policy/test_policy_bundle.py).
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from pathlib import Path

import pytest

from tests.support.deploy_cronjob_run import Obj, container_env, expand
from tests.support.deploy_manifests import by_kind, main_container, rendered
from tests.support.deploy_rbac import CLUSTER_WIDE_SECRETS, plant_reports
from tests.support.helpers import make_bare_remote, run_cli
from tests.support.kubeserver import Fault
from tests.support.kubeserver.__main__ import write_kubeconfig
from tests.support.pushgateway import PushgatewayStandin
from tests.support.reconcile_support import DEMO, demo_cluster
from tests.support.report_crds import OPEN, WG, register_reports

TOKEN = "glpat-PLANTEDdeployTOKEN0123456789"


@pytest.mark.parametrize("overlay", ["report-only", "self-heal"])
def test_the_cronjob_command_runs_reports_and_pushes(
    tmp_path: Path, overlay: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAI_GITOPS_LEASE_DURATION_S", "2")
    objects = rendered(tmp_path, overlay, ("metrics-push",))
    container = main_container(objects)
    mounts = {m["mountPath"]: tmp_path / m["name"] for m in container["volumeMounts"]}
    for path in mounts.values():
        path.mkdir()
    with PushgatewayStandin() as gateway:
        for demo in demo_cluster(tmp_path):
            demo.server.inject_fault(Fault(CLUSTER_WIDE_SECRETS, status=403, times=-1))
            plant_reports(demo.server)
            remote = make_bare_remote(tmp_path, demo.repo)
            env = container_env(objects, {"url": f"file://{remote}", "token": TOKEN}, mounts)
            env["KAI_GITOPS_PUSHGATEWAY_URL"] = gateway.url
            args = expand(container["args"], env, mounts)
            code, out, err = run_cli(args, env={**env, "KUBECONFIG": str(demo.kubeconfig)})
            assert code == 2, err  # demo findings remain (Helm release, gates): the Job fails on purpose
            report = json.loads(out)
            assert report["cluster"] == "prod-addon"
            if overlay == "self-heal":
                assert report["apply"]["ok"] and report["apply"]["applied"] == 3
                assert demo.queue("default-parent-queue")["spec"]["resources"]["cpu"]["quota"] == -1
            else:
                assert not demo.writes() or all("report" in r.path for r in demo.writes())
            cluster_report = demo.server.get_object(
                "wgpolicyk8s.io/v1alpha2", "ClusterPolicyReport", "kai-gitops-prod-addon"
            )
            assert cluster_report and cluster_report["results"]
            assert {"KAI-R-016"} <= {r["policy"] for r in cluster_report["results"]}
            logs = [json.loads(line) for line in err.splitlines() if line.startswith("{")]  # --log-format=json
            # log records carry the run id; reconcile --apply's audit lines (one per change) carry the plan id
            assert logs and all(
                (entry.get("runId") or entry.get("planId")) and entry["cluster"] == "prod-addon" for entry in logs
            )
            written = json.dumps([cluster_report, out, err, gateway.exposition()])
        assert (tmp_path / "cache" / "repos").is_dir()  # the clone went to the cache emptyDir
        assert gateway.pushes and "/metrics/job/kai-gitops/cluster/prod-addon" in gateway.pushes[-1].path
    assert TOKEN not in written


def lab_with_a_pending_pod(*, error: bool) -> list[Obj]:
    """The demo's lab cluster (clean against the repo's HEAD~1) with an NVCF pod KAI cannot place: NVCA-P-003, a
    warning with an operator's command. `error`: the KAI release also runs another chart version than Git pins
    (KAI-R-012, an error no apply fixes)."""
    items = DEMO.lab_standalone_snapshot()
    if error:
        values = DEMO._canonical_values()
        items = [
            DEMO._release("kai-scheduler", "kai-scheduler", 1, "deployed", "v0.14.0", values)
            if i["kind"] == "Secret"
            else i
            for i in items
        ]
    return [
        *items,
        DEMO._obj("v1", "Namespace", "nvcf-backend"),
        DEMO._pod("fn-b-0", "nvcf-backend", "kai-scheduler", "Pending", queue="default-queue", ready=False),
        DEMO._obj(
            "v1",
            "Event",
            "fn-b-0.17a",
            "nvcf-backend",
            reason="Unschedulable",
            type="Warning",
            involvedObject={"kind": "Pod", "namespace": "nvcf-backend", "name": "fn-b-0"},
            message="0/3 nodes are available: 3 node(s) didn't have free GPUs.",
        ),
    ]


@pytest.mark.parametrize("overlay", ["report-only", "self-heal"])
def test_the_job_fails_on_an_error_not_on_warnings_which_stay_in_reports_and_metrics(
    tmp_path: Path, overlay: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shipped args: a Pending pod (a warning) every hour must not fail the Job; an error-level finding does."""
    monkeypatch.setenv("KAI_GITOPS_LEASE_DURATION_S", "2")
    objects = rendered(tmp_path, overlay, ("metrics-push",))
    (settings,) = [o for o in by_kind(objects, "ConfigMap") if o["metadata"]["name"] == "kai-gitops-settings"]
    settings["data"] |= {"cluster": "lab-standalone", "ref": "HEAD~1"}  # what a user's overlay patches
    container = main_container(objects)
    for error, expected in ((False, 0), (True, 2)):
        run = tmp_path / f"error-{error}"
        mounts = {m["mountPath"]: run / m["name"] for m in container["volumeMounts"]}
        for path in mounts.values():
            path.mkdir(parents=True)
        with PushgatewayStandin() as gateway:
            for demo in demo_cluster(run, lab_with_a_pending_pod(error=error)):
                demo.server.inject_fault(Fault(CLUSTER_WIDE_SECRETS, status=403, times=-1))
                register_reports(demo.server, WG + OPEN)
                write_kubeconfig(demo.kubeconfig, "lab", demo.server.url)  # the lab cluster's kubeContext
                env = container_env(
                    objects, {"url": f"file://{make_bare_remote(run, demo.repo)}", "token": TOKEN}, mounts
                )
                env["KAI_GITOPS_PUSHGATEWAY_URL"] = gateway.url
                code, out, err = run_cli(
                    expand(container["args"], env, mounts), env={**env, "KUBECONFIG": str(demo.kubeconfig)}
                )
                assert code == expected, err
                report = json.loads(out)
                severities = {f["rule"]: f["severity"] for f in report["findings"]}
                assert severities["NVCA-P-003"] == "warning"
                assert ("error" in severities.values()) == error, severities
                pod_report = demo.server.get_object(
                    "wgpolicyk8s.io/v1alpha2", "PolicyReport", "kai-gitops-lab-standalone", "nvcf-backend"
                )
                assert pod_report and {r["policy"] for r in pod_report["results"]} == {"NVCA-P-003"}
            exposition = gateway.exposition()
        assert re.search(r'kai_gitops_findings\{[^}]*rule="NVCA-P-003",severity="warning"[^}]*\} 1\.0', exposition)
        assert re.search(rf"kai_gitops_last_run_exit_code\{{[^}}]*\}} {expected}\.0", exposition)


def write_back(server_url: str, queue: str, resources: Obj, manager: str) -> None:
    """Another controller's merge patch of a Queue's resources, under its own field manager."""
    request = urllib.request.Request(
        f"{server_url}/apis/scheduling.run.ai/v2/queues/{queue}?fieldManager={manager}",
        method="PATCH",
        data=json.dumps({"spec": {"resources": resources}}).encode(),
        headers={"Content-Type": "application/merge-patch+json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 200


def test_the_self_heal_cronjob_catches_a_controller_fight_on_its_next_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shipped self-heal Job keeps its audit log on its claim: a field it wrote, written back by another
    manager before the next Job, is KAI-D-009 on that Job and left alone. Each Job is a new pod, so the mounts
    are fresh dirs but the claim's, which both Jobs share as the kubelet would mount it."""
    monkeypatch.setenv("KAI_GITOPS_LEASE_DURATION_S", "2")
    objects = rendered(tmp_path, "self-heal")
    container = main_container(objects)
    claim = tmp_path / "claim"
    claim.mkdir()
    for demo in demo_cluster(tmp_path):
        demo.server.inject_fault(Fault(CLUSTER_WIDE_SECRETS, status=403, times=-1))
        plant_reports(demo.server)
        remote = make_bare_remote(tmp_path, demo.repo)
        reports = []
        for run in ("first", "second"):
            mounts = {
                m["mountPath"]: claim if m["name"] == "state" else tmp_path / run / m["name"]
                for m in container["volumeMounts"]
            }
            for path in mounts.values():
                path.mkdir(parents=True, exist_ok=True)
            env = container_env(objects, {"url": f"file://{remote}", "token": TOKEN}, mounts)
            code, out, err = run_cli(
                expand(container["args"], env, mounts), env={**env, "KUBECONFIG": str(demo.kubeconfig)}
            )
            assert code == 2, err
            reports.append(json.loads(out))
            if run == "first":
                resources = demo.queue("default-parent-queue")["spec"]["resources"]
                assert resources["cpu"]["quota"] == -1  # the first Job's fix
                # managedFields times are whole seconds, and the stand-in server does not move a field's
                # ownership on an update (the real one does): the write back lands in a later second than ours.
                time.sleep(1.0 - time.time() % 1.0 + 0.05)
                write_back(
                    demo.server.url,
                    "default-parent-queue",
                    {**resources, "cpu": {**resources["cpu"], "quota": 500}},
                    "queue-syncer",
                )
        first, second = reports
        assert first["apply"]["applied"] == 3 and not [f for f in first["findings"] if f["rule"] == "KAI-D-009"]
        (fight,) = [f for f in second["findings"] if f["rule"] == "KAI-D-009"]
        assert [(f["field"], f["manager"], f["wroteFirst"]) for f in fight["details"]["fields"]] == [
            ("cpu.quota", "queue-syncer", "kai-gitops")
        ]
        assert demo.queue("default-parent-queue")["spec"]["resources"]["cpu"]["quota"] == 500  # left alone
        assert (claim / "audit.jsonl").is_file()
