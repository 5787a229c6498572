"""Builds the bundled demo: a GitOps repo (template + one operator "pull request") and live snapshots.

    python repo-templates/demo/build.py repo DIR        # Git repo at DIR: commit 1 template, commit 2 PR edits
    python repo-templates/demo/build.py snapshots DIR   # regenerate the committed demo snapshots
    python repo-templates/demo/build.py charts DIR      # Git repo at DIR: the function charts of repo-templates

The pull request's mistakes include a value the KAI chart silently drops (binder.replicas) and two new
queues whose GPU quotas add up to more than their parent's (KAI-Q-021, with the numbers).
The snapshots show what the user guide's readers actually hit: default queues left at quota 0 after a
`helm upgrade`, a node labelled schedule=True (wrong case), a feature-gate list without KAIScheduler,
a second KAI release under another name, and kai-config with GPU sharing turned on by hand.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pygit2
from ruamel.yaml import YAML

HERE = Path(__file__).resolve().parent
TEMPLATE = HERE.parent / "gitops-repo"
FUNCTION_CHARTS = HERE.parent / "function-charts"
sys.path.insert(0, str(HERE.parent.parent))

from reconciler.model.helm import encode_release_secret  # noqa: E402

# The operator's pull request: (file, old text or None to append, new text). Each is a mistake the PR check
# must catch.
PR_EDITS = [
    ("clusters/lab/kai-values.yaml", "  placementStrategy: binpack", "  placementStrategy: spread"),
    ("clusters/lab/kai-values.yaml", "    preempt:\n      enabled: false", "    preempt:\n      enabled: yes"),
    ("clusters/lab/kai-values.yaml",
     "  childResources:\n    cpu:\n      quota: -1", "  childResources:\n    cpu:\n      quota: 0"),
    # Appended (old text None): no chart carries per-component replicas into kai-config (KAI-Scheduler #1124).
    ("clusters/lab/kai-values.yaml", None, "\nbinder:\n  replicas: 2\n"),
    ("clusters/lab/nvca-operator-values.yaml", '"KAIScheduler"]', '"kaischeduler", "HelmAllowCPUNodes"]'),
    ("environments/prod.yaml", "  dynamoOperator:\n    enabled: false", "  dynamoOperator:\n    enabled: true"),
    # Two research sub-teams, each within research's 8 GPUs, but together promised 12 (KAI-Q-021).
    ("clusters/lab/queues.yaml", None, "".join(
        f"---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata:\n  name: research-{team}\nspec:\n"
        "  parentQueue: research\n  resources:\n    cpu: {quota: 16000, limit: 64000, overQuotaWeight: 1}\n"
        "    gpu: {quota: 6, limit: 8, overQuotaWeight: 1}\n"
        "    memory: {quota: 128000, limit: 512000, overQuotaWeight: 1}\n" for team in ("nlp", "vision"))),
]
SIGNATURE = ("kai-gitops demo", "demo@example.invalid")


def build_repo(target: Path) -> None:
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(TEMPLATE, target)
    repo = pygit2.init_repository(str(target), initial_head="main")
    _commit(repo, "Add kai-gitops config for prod and lab")
    for file, old, new in PR_EDITS:
        path = target / file
        text = path.read_text()
        if old is not None and old not in text:
            raise SystemExit(f"demo edit does not apply to {file}: {old!r}")
        path.write_text(text + new if old is None else text.replace(old, new, 1))
    _commit(repo, "lab: spread placement, tune queues, two binders; prod: enable Dynamo")


def build_charts_repo(target: Path) -> None:
    """The function charts (three done right, one broken chart per mistake) as a repository `check` reads."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(FUNCTION_CHARTS, target)
    repo = pygit2.init_repository(str(target), initial_head="main")
    _commit(repo, "Add function charts and the clusters they deploy to")


def _commit(repo: pygit2.Repository, message: str) -> None:
    repo.index.add_all()
    repo.index.write()
    tree = repo.index.write_tree()
    author = pygit2.Signature(*SIGNATURE, time=1764400000 + len(list(repo.references)), offset=0)
    parents = [] if repo.head_is_unborn else [repo.head.target]
    repo.create_commit("HEAD", author, author, message, tree, parents)


# -- snapshots ---------------------------------------------------------------------------------

CANONICAL_TRIPLE = {"quota": -1, "limit": -1, "overQuotaWeight": 1}
CHART_DEFAULT_TRIPLE = {"quota": 0, "limit": -1, "overQuotaWeight": 1}
STACK_GATES = ["SelfHosted", "LogPosting", "DynamicGPUDiscovery", "InfraResourceOverhead",
               "EnforceHelmFunctionResourceLimits", "EnforceContainerFunctionResourceLimits",
               "EnforceHelmTaskResourceLimits", "EnforceContainerTaskResourceLimits", "BYOObservability"]
CREATED = "2026-10-01T08:00:00Z"


def _obj(api: str, kind: str, name: str, namespace: str | None = None, **rest: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "creationTimestamp": CREATED}
    if namespace:
        meta["namespace"] = namespace
    meta.update(rest.pop("metadata", {}))
    return {"apiVersion": api, "kind": kind, "metadata": meta, **rest}


def _crds() -> list[dict[str, Any]]:
    names = ["queues.scheduling.run.ai", "podgroups.scheduling.run.ai", "schedulingshards.kai.scheduler",
             "configs.kai.scheduler", "topologies.kai.scheduler", "nvcfbackends.nvcf.nvidia.io"]
    return [_obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", n) for n in names]


def _queue(name: str, triple: dict[str, Any], parent: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"resources": {r: dict(triple) for r in ("cpu", "gpu", "memory")}}
    if parent:
        spec["parentQueue"] = parent
    return _obj("scheduling.run.ai/v2", "Queue", name, spec=spec,
                metadata={"annotations": {"helm.sh/resource-policy": "keep"}})


def _release(name: str, namespace: str, revision: int, status: str, version: str,
             config: dict[str, Any]) -> dict[str, Any]:
    release = {"name": name, "namespace": namespace, "version": revision, "info": {"status": status},
               "chart": {"metadata": {"name": "kai-scheduler", "version": version, "appVersion": version}},
               "config": config, "manifest": "---\n# (rendered manifest omitted in the demo)\n"}
    return encode_release_secret(release)


def _canonical_values() -> dict[str, Any]:
    return YAML(typ="safe").load((TEMPLATE / "clusters/lab/kai-values.yaml").read_text())


def _pod(name: str, ns: str, scheduler: str, phase: str, *, queue: str | None, nvcf: bool = True,
         ready: bool = True, created: str = CREATED) -> dict[str, Any]:
    labels = {"icms-request-id": f"req-{name}"} if nvcf else {"app": name}
    if queue:
        labels["kai.scheduler/queue"] = queue
    status = {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    return _obj("v1", "Pod", name, ns, metadata={"labels": labels, "creationTimestamp": created},
                spec={"schedulerName": scheduler, "containers": [{"name": "main", "image": "nvcr.io/x/y:1"}]},
                status=status)


def _service_account_pod(pod: dict[str, Any], account: str, *, started: str) -> dict[str, Any]:
    pod["spec"]["serviceAccountName"] = account
    pod["status"]["startTime"] = started
    return pod


def _node(name: str, schedule: str | None) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name, "nvidia.com/gpu.present": "true"}
    if schedule is not None:
        labels["nvca.nvcf.nvidia.io/schedule"] = schedule
    return _obj("v1", "Node", name, metadata={"labels": labels},
                status={"conditions": [{"type": "Ready", "status": "True"}]})


def _dto(capabilities: list[str]) -> dict[str, Any]:
    caps = ",".join(f'"{c}"' for c in capabilities)
    text = f'clusterName: "prod"\nnvcaVersion: "3.2.7"\ncapabilities: [{caps}]\n'
    return _obj("v1", "ConfigMap", "nvcfbackend-self-managed", "nvca-operator", data={"cluster-dto.yaml": text})


def _backend(spec_gates: list[str], status_gates: list[str], health: str,
             overrides: list[str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"featureGate": {"values": spec_gates}}
    if overrides is not None:
        spec["overrides"] = {"featureGate": {"values": overrides}}
    return _obj("nvcf.nvidia.io/v1", "NVCFBackend", "nvcf-backend", "nvca-operator", spec=spec,
                status={"featureGate": {"values": status_gates}, "agentStatus": health})


def _reconciled(item: dict[str, Any]) -> dict[str, Any]:
    """`item` as the operator leaves it once it has deployed everything (its five conditions, generation 1)."""
    healthy = [("Reconciling", "False", "reconciled", "Reconciliation completed successfully"),
               ("Deployed", "True", "deployed", "Resources deployed"),
               ("Available", "True", "available", "System available"),
               ("DependenciesFulfilled", "True", "dependencies_fulfilled", "Dependencies are fulfilled"),
               ("Ready", "True", "ready", "System is ready")]
    item["status"] = {"conditions": [{"type": t, "status": s, "reason": r, "message": m, "observedGeneration": 1,
                                      "lastTransitionTime": "2026-10-01T08:00:00Z"} for t, s, r, m in healthy]}
    item["metadata"]["generation"] = 1
    return item


def _kai_config(spec: dict[str, Any]) -> dict[str, Any]:
    return _reconciled(_obj("kai.scheduler/v1", "Config", "kai-config", spec=spec))


def _shard(spec: dict[str, Any]) -> dict[str, Any]:
    return _reconciled(_obj("kai.scheduler/v1", "SchedulingShard", "default", spec=spec))


def _rendered_kai_config(addon: bool) -> dict[str, Any]:
    """kai-config as the chart rendered it: prod's from what the stack forwards of its environment (chart
    v0.16.7), lab's from its values (chart v0.14.7)."""
    from reconciler.model.desired import canonical_kai_values
    from reconciler.model.kai_config import ValueSource, addon_forwarded_values, render_kai_config
    from reconciler.model.values import chart_defaults, deep_merge

    read = YAML(typ="safe", pure=True).load
    if addon:
        given, _ = addon_forwarded_values(read((TEMPLATE / "environments" / "prod.yaml").read_text()),
                                          canonical_kai_values())
        version, tag = "v0.16.8", "v0.16.7"
    else:
        given = read((TEMPLATE / "clusters" / "lab" / "kai-values.yaml").read_text())
        version, tag = "v0.14.7", "v0.14.7"
    values = deep_merge(chart_defaults(version), given)
    return render_kai_config(version, values, ValueSource("values", given, ("values", ())), tag).spec()


def _prod_kai_config() -> dict[str, Any]:
    """Someone turned GPU sharing on by hand with kubectl, which Git does not say (KAI-D-005; reconcile
    patches it back)."""
    spec = _rendered_kai_config(addon=True)
    spec["admission"]["gpuSharing"] = True
    return _kai_config(spec)


def prod_addon_snapshot() -> list[dict[str, Any]]:
    violation = ("CPU resource violation for queue default-parent-queue: expected limit=-1, quota=-1, "
                 "overQuotaWeight=1, got limit=-1, quota=0, overQuotaWeight=1")
    first_install = {"global": {"registry": "ghcr.io/kai-scheduler/kai-scheduler"}}
    upgraded = _canonical_values()
    old = {"global": {"registry": "registry.example.com/kai", "imagePullSecrets": [{"name": "regcred"}],
                      "registryPassword": "hunter2-do-not-print"}}
    spec_gates = [g for g in STACK_GATES if g != "DynamicGPUDiscovery"]
    items = [
        *_crds(),
        # First installed with chart defaults, then upgraded with the guide's values: queues kept quota 0.
        _queue("default-parent-queue", CHART_DEFAULT_TRIPLE),
        _queue("default-queue", CHART_DEFAULT_TRIPLE, "default-parent-queue"),
        _shard({"partitionLabelValue": "", "placementStrategy": {"gpu": "binpack", "cpu": "binpack"},
                "plugins": {"nodeplacement": {"arguments": {"gpu": "binpack", "cpu": "spread"}}},
                "actions": {"preempt": {"enabled": False}, "consolidation": {"enabled": False}}}),
        _prod_kai_config(),
        _release("kai-scheduler", "kai-scheduler", 1, "superseded", "v0.16.7", first_install),
        _release("kai-scheduler", "kai-scheduler", 2, "deployed", "v0.16.7", upgraded),
        _release("kai", "runai", 4, "deployed", "v0.14.0", old),          # a second KAI release
        _obj("v1", "Secret", "nvcr-pull-secret", "nvca-operator", type="kubernetes.io/dockerconfigjson",
             data={".dockerconfigjson": "eyJhdXRocyI6e319"}),            # never read, never printed
        # The rendered list (ConfigMap, spec) predates the add-on and misses KAIScheduler; someone turned
        # the gate on by hand with an override, which the next Helm upgrade will wipe.
        _dto(STACK_GATES),
        _backend(spec_gates, [*spec_gates, "KAIScheduler"], "Unknown", overrides=[*spec_gates, "KAIScheduler"]),
        _obj("v1", "Namespace", "nvcf-backend", metadata={"labels": {
            "nvca.nvcf.nvidia.io/workload-instance-type": "gpu"}}),
        *[_node(f"gpu-node-{i}", "True" if i == 2 else None) for i in range(1, 5)],
        # The 401 window (KAI-Scheduler #1536): an upgrade re-created the scheduler's ServiceAccount after the
        # pod started, so the token the pod holds belongs to the deleted account until the pod restarts.
        # (the account first: an API server admits a pod only once its ServiceAccount exists)
        _obj("v1", "ServiceAccount", "kai-scheduler", "kai-scheduler",
             metadata={"creationTimestamp": "2026-11-30T02:14:00Z"}),
        _service_account_pod(_pod("kai-scheduler-default-7d9f5c6b8-x2k4q", "kai-scheduler", "default-scheduler",
                                  "Running", queue=None, nvcf=False), "kai-scheduler", started=CREATED),
        _pod("binder-5c6b8", "kai-scheduler", "default-scheduler", "Running", queue=None, nvcf=False),
        _pod("fn-llama-0", "nvcf-backend", "default-scheduler", "Running", queue=None, created="2026-09-20T10:00:00Z"),
        _pod("fn-llama-1", "nvcf-backend", "kai-scheduler", "Pending", queue="default-queue", ready=False),
        _obj("v1", "Event", "fn-llama-1.17a", "nvcf-backend", reason="Unschedulable", type="Warning",
             involvedObject={"kind": "Pod", "namespace": "nvcf-backend", "name": "fn-llama-1"},
             message="0/4 nodes are available: 4 node(s) didn't have free GPUs."),
        {"apiVersion": "kai-gitops/v1", "kind": "NVCAHealthz", "metadata": {"name": "nvca"}, "httpStatus": 503,
         "body": {"Status": "unhealthy", "Components": {"kai-scheduler-queues": {
             "Status": "unhealthy", "Errors": [violation]}}}},
    ]
    return items


def lab_standalone_snapshot() -> list[dict[str, Any]]:
    values = _canonical_values()
    research = _queue("research", {"quota": 8, "limit": 16, "overQuotaWeight": 1}, "default-parent-queue")
    research["spec"]["resources"]["cpu"] = {"quota": 64000, "limit": 128000, "overQuotaWeight": 1}
    research["spec"]["resources"]["memory"] = {"quota": 512000, "limit": 1024000, "overQuotaWeight": 1}
    gates = ["DynamicGPUDiscovery", "SelfHosted", "KAIScheduler"]
    return [
        *_crds(),
        _queue("default-parent-queue", CANONICAL_TRIPLE),
        _queue("default-queue", CANONICAL_TRIPLE, "default-parent-queue"),
        research,
        _shard({"placementStrategy": {"gpu": "binpack", "cpu": "binpack"},
                "plugins": {"nodeplacement": {"arguments": {"gpu": "binpack", "cpu": "spread"}}},
                "actions": {"preempt": {"enabled": False}, "consolidation": {"enabled": False}}}),
        _kai_config(_rendered_kai_config(addon=False)),
        _release("kai-scheduler", "kai-scheduler", 1, "deployed", "v0.14.7", values),
        _dto(gates),
        _backend([g for g in gates if g != "DynamicGPUDiscovery"], [g for g in gates if g != "DynamicGPUDiscovery"],
                 "healthy"),
        _node("lab-gpu-1", "true"), _node("lab-gpu-2", "true"), _node("lab-cpu-1", None),
        _pod("kai-scheduler-default-1", "kai-scheduler", "default-scheduler", "Running", queue=None, nvcf=False),
        _pod("fn-a-0", "nvcf-backend", "kai-scheduler", "Running", queue="default-queue"),
        {"apiVersion": "kai-gitops/v1", "kind": "NVCAHealthz", "metadata": {"name": "nvca"}, "httpStatus": 200,
         "body": {"Status": "healthy", "Components": {"kai-scheduler-queues": {"Status": "healthy", "Errors": []}}}},
    ]


def write_snapshots(folder: Path) -> None:
    yaml = YAML()
    yaml.default_flow_style = False
    folder.mkdir(parents=True, exist_ok=True)
    for name, items in (("prod-addon", prod_addon_snapshot()), ("lab-standalone", lab_standalone_snapshot())):
        with (folder / f"{name}.yaml").open("w") as out:
            out.write(f"# Demo live snapshot of cluster {name}; regenerate: python repo-templates/demo/build.py "
                      "snapshots repo-templates/demo/snapshots\n")
            yaml.dump({"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items}, out)


if __name__ == "__main__":
    builders = {"repo": build_repo, "snapshots": write_snapshots, "charts": build_charts_repo}
    if len(sys.argv) != 3 or sys.argv[1] not in builders:
        raise SystemExit(__doc__)
    builders[sys.argv[1]](Path(sys.argv[2]))
