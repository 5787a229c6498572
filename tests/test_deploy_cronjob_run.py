"""The CronJob's command, run the way the kubelet would run it, against the demo cluster.

The rendered container's args and env are taken as they are: `$(VAR)` is expanded from the env, whose
values come from ConfigMap kai-gitops-settings (its pushgateway URL pointed at a local stand-in) and
from Secret kai-gitops-git (a file:// clone URL and a planted token). The pod's mount paths are mapped
to temp dirs, and KUBECONFIG stands in for the in-cluster service account. The API server answers the
default RBAC's 403 for the cluster-wide Secret list. Not modelled: the image itself, the kubelet's
`$$` escaping, the OPA sidecar (see tests/test_policy_bundle.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import make_bare_remote, run_cli
from tests.reconcile_support import demo_cluster
from tests.support.kubeserver import Fault
from tests.support.pushgateway import PushgatewayStandin
from tests.test_deploy_manifests import by_kind, main_container, rendered
from tests.test_deploy_rbac import CLUSTER_WIDE_SECRETS, plant_reports

TOKEN = "glpat-PLANTEDdeployTOKEN0123456789"
Obj = dict[str, Any]


def container_env(objects: list[Obj], secret: dict[str, str], mounts: dict[str, Path]) -> dict[str, str]:
    container = main_container(objects)
    (settings,) = [o for o in by_kind(objects, "ConfigMap") if o["metadata"]["name"] == "kai-gitops-settings"]
    env: dict[str, str] = {}
    for item in container["env"]:
        source = item.get("valueFrom", {})
        if "value" in item:
            value = item["value"]
            env[item["name"]] = str(next((p for m, p in mounts.items() if value == m), value))
        elif "configMapKeyRef" in source:
            env[item["name"]] = settings["data"][source["configMapKeyRef"]["key"]]
        elif source["secretKeyRef"]["key"] in secret:
            env[item["name"]] = secret[source["secretKeyRef"]["key"]]
    return env


def expand(args: list[str], env: dict[str, str]) -> list[str]:
    return [re.sub(r"\$\(([A-Z0-9_]+)\)", lambda m: env[m.group(1)], a) for a in args]


@pytest.mark.parametrize("overlay", ["report-only", "self-heal"])
def test_the_cronjob_command_runs_reports_and_pushes(tmp_path: Path, overlay: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
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
            args = expand(container["args"], env)
            code, out, err = run_cli(args, env={**env, "KUBECONFIG": str(demo.kubeconfig)})
            assert code == 2, err          # demo findings remain (Helm release, gates): the Job fails on purpose
            report = json.loads(out)
            assert report["cluster"] == "prod-addon"
            if overlay == "self-heal":
                assert report["apply"]["ok"] and report["apply"]["applied"] == 3
                assert demo.queue("default-parent-queue")["spec"]["resources"]["cpu"]["quota"] == -1
            else:
                assert not demo.writes() or all("report" in r.path for r in demo.writes())
            cluster_report = demo.server.get_object("wgpolicyk8s.io/v1alpha2", "ClusterPolicyReport",
                                                    "kai-gitops-prod-addon")
            assert cluster_report and cluster_report["results"]
            assert {"KAI-R-016"} <= {r["policy"] for r in cluster_report["results"]}
            logs = [json.loads(line) for line in err.splitlines() if line.startswith("{")]  # --log-format=json
            # log records carry the run id; reconcile --apply's audit lines (one per change) carry the plan id
            assert logs and all((entry.get("runId") or entry.get("planId")) and entry["cluster"] == "prod-addon"
                                for entry in logs)
            written = json.dumps([cluster_report, out, err, gateway.exposition()])
        assert (tmp_path / "cache" / "repos").is_dir()   # the clone went to the cache emptyDir
        assert gateway.pushes and "/metrics/job/kai-gitops/cluster/prod-addon" in gateway.pushes[-1].path
    assert TOKEN not in written
