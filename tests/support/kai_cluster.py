"""A KAI cluster on the real API server, made the way an operator makes one: real ``helm`` installs the test
chart (tests/fixtures/charts/kai-trap, the KAI chart's default-queue and default-shard mechanics), the
objects NVCA and KAI's controllers would have created are written as they would be, and ``kai-gitops`` runs
as its installed command with a kubeconfig file.

    cluster = KaiCluster(envtest, tmp_path)
    cluster.install_trapped()          # helm install (chart defaults), then helm upgrade (the guide's values)
    cluster.run("diff")                # kai-gitops diff --repo … --cluster lab --kubeconfig …

No controller-manager, scheduler or NVCA agent runs (see tests/support/envtest): Pods are given their status
through the ``/status`` subresource, NVCFBackend its status the same way, and NVCA's Service has no ready
endpoint, so ``/healthz`` cannot be read and kai-gitops shows only its predicted verdict.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kubernetes

from tests.support.envtest import EnvTest
from tests.support.helpers import FIXTURES, TEMPLATE, make_repo
from tests.support.tools import require_tool

CHART = FIXTURES / "charts" / "kai-trap"
GUIDE_VALUES = FIXTURES / "nvcf" / "standalone-kai-values.yaml"  # the user guide's values.yaml
RELEASE, KAI_NAMESPACE = "kai-scheduler", "kai-scheduler"  # the product expects them (docs/policies.md)
LEASE_NAMESPACE = "kai-gitops"  # deploy/base/namespace.yaml
QUEUES = ("scheduling.run.ai", "v2", "queues")
SHARDS = ("kai.scheduler", "v1", "schedulingshards")
PARENT, CHILD = "default-parent-queue", "default-queue"
GATES = ["DynamicGPUDiscovery", "SelfHosted", "KAIScheduler"]  # clusters/lab/nvca-operator-values.yaml
CONTEXT = "lab"
CLI_TIMEOUT_S = 120


def repo_config(*, shared_selector: dict[str, str] | None = None) -> str:
    """kai-gitops.yaml for one standalone cluster, pinned like the template's lab cluster (v0.14.7)."""
    shared = "      intent: dedicated\n"
    if shared_selector is not None:
        selector = ", ".join(f'{k}: "{v}"' for k, v in shared_selector.items())
        shared = f"      intent: shared\n      nodeSelector: {{{selector}}}\n"
    return (
        "apiVersion: kai-gitops/v1\nclusters:\n  - name: lab\n    kubeContext: lab\n    mode: standalone\n"
        "    kaiChartVersion: v0.14.7\n    kaiValuesFile: clusters/lab/kai-values.yaml\n"
        "    nvcaValuesFile: clusters/lab/nvca-operator-values.yaml\n    sharedCluster:\n" + shared
    )


def kai_gitops_command() -> list[str]:
    script = Path(sys.executable).parent / "kai-gitops"
    return [str(script)] if script.exists() else [sys.executable, "-m", "reconciler"]


@dataclass(repr=False)
class Result:
    code: int
    out: str
    err: str

    def __repr__(self) -> str:  # in full, for assertion messages and the run's printed trace
        return f"exit {self.code}\n--- stdout\n{self.out}--- stderr\n{self.err}"


class KaiCluster:
    def __init__(self, envtest: EnvTest, tmp: Path, *, shared_selector: dict[str, str] | None = None) -> None:
        self.envtest, self.tmp = envtest, tmp
        self.kubeconfig = envtest.write_kubeconfig(tmp / "kubeconfig", context=CONTEXT)
        self.client = envtest.api_client()
        self.custom = kubernetes.client.CustomObjectsApi(self.client)
        self.core = kubernetes.client.CoreV1Api(self.client)
        files = {
            "kai-gitops.yaml": repo_config(shared_selector=shared_selector),
            **{
                f"clusters/lab/{name}": (TEMPLATE / "clusters" / "lab" / name).read_text()
                for name in ("kai-values.yaml", "nvca-operator-values.yaml")
            },
        }
        self.repo, _ = make_repo(tmp, files)

    def close(self) -> None:
        self.client.close()

    # -- the tools, as an operator runs them ----------------------------------------------------------

    def helm(self, *args: str) -> str:
        done = subprocess.run(
            [str(require_tool("helm")), "--kubeconfig", str(self.kubeconfig), *args],
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT_S,
        )
        assert done.returncode == 0, f"helm {' '.join(args)}: {done.stderr}"
        return done.stdout

    def kubectl(self, *args: str) -> str:
        done = subprocess.run(
            [str(require_tool("kubectl")), "--kubeconfig", str(self.kubeconfig), *args],
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT_S,
        )
        assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
        return done.stdout

    def args(self, command: str, *extra: Any) -> list[str]:
        repo = [] if command == "doctor" else ["--repo", str(self.repo), "--cluster", "lab"]
        return [command, *repo, "--kubeconfig", str(self.kubeconfig), *[str(e) for e in extra]]

    def run(self, command: str, *extra: Any, env: dict[str, str] | None = None) -> Result:
        args = self.args(command, *extra)
        done = subprocess.run(
            [*kai_gitops_command(), *args],
            capture_output=True,
            text=True,
            timeout=CLI_TIMEOUT_S,
            env={**os.environ, **(env or {})},
        )
        result = Result(done.returncode, done.stdout, done.stderr)
        # Shown by pytest for a failed test (and with -rP for a passed one): what the operator would have seen.
        print(f"$ kai-gitops {' '.join(args)}\n{result!r}")
        return result

    # -- the cluster ------------------------------------------------------------------------------------

    def install_trapped(self) -> None:
        """The guide's reader: KAI first installed with chart defaults, then upgraded with the right values."""
        for namespace in (KAI_NAMESPACE, "nvca-operator", "nvca-system", LEASE_NAMESPACE):
            self.envtest.create_namespace(namespace)  # as a cluster's controllers leave them (a default SA)
        self.helm("install", RELEASE, str(CHART), "--namespace", KAI_NAMESPACE, "--create-namespace")
        self.helm("upgrade", RELEASE, str(CHART), "--namespace", KAI_NAMESPACE, "-f", str(GUIDE_VALUES))
        self.add_node("lab-cpu-1")
        self.add_running_pod(KAI_NAMESPACE, "kai-scheduler-default-7d9f", "lab-cpu-1")
        self.add_running_pod(KAI_NAMESPACE, "binder-5c6b8", "lab-cpu-1")
        self.add_kai_config()
        self.mark_shards_reconciled()
        self.add_nvca()

    def add_kai_config(self) -> None:
        """kai-config as v0.14.7's kai-config-deployer Job applies it from the guide's values (no Job controller
        runs here), with the conditions the operator writes once everything is deployed."""
        from ruamel.yaml import YAML

        from reconciler.model.kai_config import ValueSource, render_kai_config
        from reconciler.model.values import chart_defaults, deep_merge

        given = YAML(typ="safe", pure=True).load(GUIDE_VALUES.read_text())
        values = deep_merge(chart_defaults("v0.14.7"), given)
        spec = render_kai_config("v0.14.7", values, ValueSource("values", given, ("values", ())), "v0.14.7").spec()
        self.custom.create_cluster_custom_object(
            "kai.scheduler",
            "v1",
            "configs",
            {"apiVersion": "kai.scheduler/v1", "kind": "Config", "metadata": {"name": "kai-config"}, "spec": spec},
        )
        self.custom.patch_cluster_custom_object_status(
            "kai.scheduler", "v1", "configs", "kai-config", {"status": {"conditions": _reconciled(1)}}
        )

    def mark_shards_reconciled(self) -> None:
        """Each SchedulingShard the chart made, with the conditions the operator writes for its generation (no
        operator runs here; KAI-O-007 reads them)."""
        for shard in self.custom.list_cluster_custom_object(*SHARDS)["items"]:
            name, generation = shard["metadata"]["name"], shard["metadata"]["generation"]
            self.custom.patch_cluster_custom_object_status(
                *SHARDS, name, {"status": {"conditions": _reconciled(generation)}}
            )

    def add_node(self, name: str, labels: dict[str, str] | None = None) -> None:
        self.core.create_node({"metadata": {"name": name, "labels": labels or {}}})

    def add_running_pod(self, namespace: str, name: str, node: str) -> None:
        """A Pod as the kubelet reports it once it runs: phase Running, condition Ready (status subresource)."""
        self.core.create_namespaced_pod(
            namespace,
            {
                "metadata": {"name": name},
                "spec": {
                    "nodeName": node,
                    "containers": [{"name": "main", "image": "ghcr.io/kai-scheduler/x:v0.14.7"}],
                },
            },
        )
        self.core.patch_namespaced_pod_status(
            name, namespace, {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
        )

    def add_nvca(self) -> None:
        """What the NVCA operator renders for the lab's values, and the agent's rolled-out, healthy status."""
        capabilities = ", ".join(f'"{g}"' for g in GATES)
        dto = f'clusterName: "lab"\nnvcaVersion: "3.2.7"\ncapabilities: [{capabilities}]\n'
        self.core.create_namespaced_config_map(
            "nvca-operator", {"metadata": {"name": "nvcfbackend-self-managed"}, "data": {"cluster-dto.yaml": dto}}
        )
        spec_gates = [g for g in GATES if g != "DynamicGPUDiscovery"]  # the operator drops it from spec
        self.custom.create_namespaced_custom_object(
            "nvcf.nvidia.io",
            "v1",
            "nvca-operator",
            "nvcfbackends",
            {
                "apiVersion": "nvcf.nvidia.io/v1",
                "kind": "NVCFBackend",
                "metadata": {"name": "nvcf-backend"},
                "spec": {"featureGate": {"values": spec_gates}},
            },
        )
        self.custom.patch_namespaced_custom_object_status(
            "nvcf.nvidia.io",
            "v1",
            "nvca-operator",
            "nvcfbackends",
            "nvcf-backend",
            {"status": {"featureGate": {"values": spec_gates}, "agentStatus": "healthy"}},
        )
        self.core.create_namespaced_service(
            "nvca-system",
            {
                "metadata": {"name": "nvca"},
                "spec": {"selector": {"app": "nvca"}, "ports": [{"name": "http", "port": 8000, "targetPort": 8000}]},
            },
        )

    def queue(self, name: str) -> dict[str, Any]:
        return self.custom.get_cluster_custom_object(*QUEUES, name)

    def triples(self, name: str) -> dict[str, dict[str, Any]]:
        return self.queue(name)["spec"]["resources"]

    def lease(self) -> dict[str, Any]:
        """kai-gitops' Lease as the server stores it, in its wire form (camelCase keys, times as formatted)."""
        path = f"/apis/coordination.k8s.io/v1/namespaces/{LEASE_NAMESPACE}/leases/kai-gitops-reconcile"
        return json.loads(self.kubectl("get", "--raw", path))


def _reconciled(generation: int) -> list[dict[str, Any]]:
    """The conditions the KAI operator writes once `generation` is deployed and every operand is available."""
    healthy = (
        ("Reconciling", "False"),
        ("Deployed", "True"),
        ("Available", "True"),
        ("DependenciesFulfilled", "True"),
        ("Ready", "True"),
    )
    return [
        {
            "type": t,
            "status": v,
            "reason": t.lower(),
            "message": "",
            "observedGeneration": generation,
            "lastTransitionTime": "2026-10-01T08:00:00Z",
        }
        for t, v in healthy
    ]
