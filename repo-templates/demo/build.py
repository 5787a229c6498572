"""Builds the bundled demo: a GitOps repo (template + one operator "pull request") and live snapshots.

    python repo-templates/demo/build.py repo DIR        # Git repo at DIR: commit 1 template, commit 2 PR edits
    python repo-templates/demo/build.py snapshots DIR   # regenerate the committed demo snapshots
    python repo-templates/demo/build.py audit-log FILE  # regenerate the committed demo audit log (audit.log)
    python repo-templates/demo/build.py charts DIR      # Git repo at DIR: the function charts of repo-templates

The pull request's mistakes include a value the KAI chart silently drops (binder.replicas) and two new
queues whose GPU quotas add up to more than their parent's (KAI-Q-021, with the numbers).
The snapshots show what the user guide's readers actually hit: default queues left at quota 0 after a
`helm upgrade`, a node labelled schedule=True (wrong case), a feature-gate list without KAIScheduler,
a second KAI release under another name, and kai-config with GPU sharing turned on by hand.
"""

from __future__ import annotations

import json
import shutil
import sys
import uuid
from datetime import datetime, timedelta
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
    (
        "clusters/lab/kai-values.yaml",
        "  childResources:\n    cpu:\n      quota: -1",
        "  childResources:\n    cpu:\n      quota: 0",
    ),
    # Appended (old text None): no chart carries per-component replicas into kai-config (KAI-Scheduler #1124).
    ("clusters/lab/kai-values.yaml", None, "\nbinder:\n  replicas: 2\n"),
    ("clusters/lab/nvca-operator-values.yaml", '"KAIScheduler"]', '"kaischeduler", "HelmAllowCPUNodes"]'),
    ("environments/prod.yaml", "  dynamoOperator:\n    enabled: false", "  dynamoOperator:\n    enabled: true"),
    # Two research sub-teams, each within research's 8 GPUs, but together promised 12 (KAI-Q-021).
    (
        "clusters/lab/queues.yaml",
        None,
        "".join(
            f"---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata:\n  name: research-{team}\nspec:\n"
            "  parentQueue: research\n  resources:\n    cpu: {quota: 16000, limit: 64000, overQuotaWeight: 1}\n"
            "    gpu: {quota: 6, limit: 8, overQuotaWeight: 1}\n"
            "    memory: {quota: 128000, limit: 512000, overQuotaWeight: 1}\n"
            for team in ("nlp", "vision")
        ),
    ),
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
STACK_GATES = [
    "SelfHosted",
    "LogPosting",
    "DynamicGPUDiscovery",
    "InfraResourceOverhead",
    "EnforceHelmFunctionResourceLimits",
    "EnforceContainerFunctionResourceLimits",
    "EnforceHelmTaskResourceLimits",
    "EnforceContainerTaskResourceLimits",
    "BYOObservability",
]
CREATED = "2026-10-01T08:00:00Z"
# The prod cluster's history, as its objects' managedFields, the KAI release's Secrets and the audit log tell it:
# Helm installs KAI with chart defaults (revision 1, which creates the default queues at quota 0); on Nov 30 CI
# upgrades it with the guide's values (revision 2: the queues, rendered on install only and kept by
# helm.sh/resource-policy: keep, stay as they were; the KAI operator re-renders kai-config); that afternoon
# alice turns GPU sharing on with `kubectl edit`. Someone had labelled gpu-node-2 by hand the week before.
KAI_INSTALLED = "2026-10-01T07:59:58.482903117Z"  # Helm's info.*_deployed: its clock, nanoseconds
KAI_UPGRADED = "2026-11-30T02:13:57.907113284Z"
OPERATOR_RERENDERED = "2026-11-30T02:14:03Z"  # managedFields times: the API server's, to the second
EDITED_BY_HAND = "2026-11-30T14:02:11Z"
LABELLED_BY_HAND = "2026-11-24T09:41:37Z"
KAI_OPERATOR = "operator"  # the KAI operator's field manager: its binary's name (controller-runtime's default)


def _obj(api: str, kind: str, name: str, namespace: str | None = None, **rest: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "creationTimestamp": CREATED}
    if namespace:
        meta["namespace"] = namespace
    meta.update(rest.pop("metadata", {}))
    return {"apiVersion": api, "kind": kind, "metadata": meta, **rest}


def _crds() -> list[dict[str, Any]]:
    names = [
        "queues.scheduling.run.ai",
        "podgroups.scheduling.run.ai",
        "schedulingshards.kai.scheduler",
        "configs.kai.scheduler",
        "topologies.kai.scheduler",
        "nvcfbackends.nvcf.nvidia.io",
    ]
    return [_obj("apiextensions.k8s.io/v1", "CustomResourceDefinition", n) for n in names]


def _queue(name: str, triple: dict[str, Any], parent: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"resources": {r: dict(triple) for r in ("cpu", "gpu", "memory")}}
    if parent:
        spec["parentQueue"] = parent
    return _obj(
        "scheduling.run.ai/v2", "Queue", name, spec=spec, metadata={"annotations": {"helm.sh/resource-policy": "keep"}}
    )


def _helm_installed_queue(name: str, triple: dict[str, Any], parent: str | None = None) -> dict[str, Any]:
    """A default queue as `helm install` of the KAI release created it: Helm's labels and annotations, and every
    field owned by Helm's field manager since that install."""
    queue = _queue(name, triple, parent)
    queue["metadata"]["labels"] = {"app.kubernetes.io/managed-by": "Helm"}
    queue["metadata"]["annotations"].update(
        {"meta.helm.sh/release-name": "kai-scheduler", "meta.helm.sh/release-namespace": "kai-scheduler"}
    )
    return _managed(queue, _entry("helm", "scheduling.run.ai/v2", CREATED, _owned(queue, "metadata", "spec")))


def _managed(obj: dict[str, Any], *entries: dict[str, Any]) -> dict[str, Any]:
    obj["metadata"]["managedFields"] = list(entries)
    return obj


def _entry(manager: str, api: str, time: str, fields: dict[str, Any], subresource: str | None = None) -> dict[str, Any]:
    """One managedFields entry, its keys in the order the API server writes them."""
    entry = {
        "manager": manager,
        "operation": "Update",
        "apiVersion": api,
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }
    if subresource:
        entry["subresource"] = subresource
    return entry


def _owned(obj: dict[str, Any], *tops: str) -> dict[str, Any]:
    """fieldsV1 of the whole of `tops` in `obj` (metadata: its labels and annotations), as the API server records a
    create: `f:<name>` per field, `.` for each map set itself, lists whole (KAI's CRDs declare none mergeable)."""
    fields: dict[str, Any] = {}
    for top in tops:
        value = obj[top]
        if top == "metadata":
            value = {k: v for k, v in value.items() if k in ("labels", "annotations")}
            fields["f:metadata"] = {f"f:{k}": _field_set(v) for k, v in sorted(value.items())}
        else:
            fields[f"f:{top}"] = _field_set(value)
    return fields


def _field_set(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        return {}
    return {".": {}, **{f"f:{k}": _field_set(v) for k, v in sorted(value.items())}}


def _without(fields: dict[str, Any], *path: str) -> dict[str, Any]:
    """`fields` less the field at `path`: what an Update by another manager takes over."""
    inner = dict(fields)
    head, *rest = path
    key = f"f:{head}"
    if rest:
        inner[key] = _without(inner[key], *rest)
    else:
        del inner[key]
    return inner


def _only(*path: str) -> dict[str, Any]:
    """fieldsV1 of the one field at `path`."""
    fields: dict[str, Any] = {}
    for step in reversed(path):
        fields = {f"f:{step}": fields}
    return fields


def _release(
    name: str,
    namespace: str,
    revision: int,
    status: str,
    version: str,
    config: dict[str, Any],
    deployed: tuple[str, str] = (CREATED, CREATED),
) -> dict[str, Any]:
    """The release Secret of one revision; `deployed` is (first, last) deployed as Helm writes them (RFC 3339 with
    nanoseconds), the first install's time and this revision's."""
    first, last = deployed
    info = {
        "first_deployed": first,
        "last_deployed": last,
        "deleted": "",
        "status": status,
        "description": "Install complete" if revision == 1 else "Upgrade complete",
    }
    release = {
        "name": name,
        "namespace": namespace,
        "version": revision,
        "info": info,
        "chart": {"metadata": {"name": "kai-scheduler", "version": version, "appVersion": version}},
        "config": config,
        "manifest": "---\n# (rendered manifest omitted in the demo)\n",
    }
    return encode_release_secret(release)


def _canonical_values() -> dict[str, Any]:
    return YAML(typ="safe").load((TEMPLATE / "clusters/lab/kai-values.yaml").read_text())


def _pod(
    name: str,
    ns: str,
    scheduler: str,
    phase: str,
    *,
    queue: str | None,
    nvcf: bool = True,
    ready: bool = True,
    created: str = CREATED,
) -> dict[str, Any]:
    labels = {"icms-request-id": f"req-{name}"} if nvcf else {"app": name}
    if queue:
        labels["kai.scheduler/queue"] = queue
    status = {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    return _obj(
        "v1",
        "Pod",
        name,
        ns,
        metadata={"labels": labels, "creationTimestamp": created},
        spec={"schedulerName": scheduler, "containers": [{"name": "main", "image": "nvcr.io/x/y:1"}]},
        status=status,
    )


def _service_account_pod(pod: dict[str, Any], account: str, *, started: str) -> dict[str, Any]:
    pod["spec"]["serviceAccountName"] = account
    pod["status"]["startTime"] = started
    return pod


def _node(name: str, schedule: str | None) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name, "nvidia.com/gpu.present": "true"}
    if schedule is not None:
        labels["nvca.nvcf.nvidia.io/schedule"] = schedule
    return _obj(
        "v1", "Node", name, metadata={"labels": labels}, status={"conditions": [{"type": "Ready", "status": "True"}]}
    )


def _dto(capabilities: list[str]) -> dict[str, Any]:
    caps = ",".join(f'"{c}"' for c in capabilities)
    text = f'clusterName: "prod"\nnvcaVersion: "3.2.7"\ncapabilities: [{caps}]\n'
    return _obj("v1", "ConfigMap", "nvcfbackend-self-managed", "nvca-operator", data={"cluster-dto.yaml": text})


def _backend(
    spec_gates: list[str], status_gates: list[str], health: str, overrides: list[str] | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {"featureGate": {"values": spec_gates}}
    if overrides is not None:
        spec["overrides"] = {"featureGate": {"values": overrides}}
    return _obj(
        "nvcf.nvidia.io/v1",
        "NVCFBackend",
        "nvcf-backend",
        "nvca-operator",
        spec=spec,
        status={"featureGate": {"values": status_gates}, "agentStatus": health},
    )


def _reconciled(item: dict[str, Any]) -> dict[str, Any]:
    """`item` as the operator leaves it once it has deployed everything (its five conditions, generation 1)."""
    healthy = [
        ("Reconciling", "False", "reconciled", "Reconciliation completed successfully"),
        ("Deployed", "True", "deployed", "Resources deployed"),
        ("Available", "True", "available", "System available"),
        ("DependenciesFulfilled", "True", "dependencies_fulfilled", "Dependencies are fulfilled"),
        ("Ready", "True", "ready", "System is ready"),
    ]
    item["status"] = {
        "conditions": [
            {
                "type": t,
                "status": s,
                "reason": r,
                "message": m,
                "observedGeneration": 1,
                "lastTransitionTime": "2026-10-01T08:00:00Z",
            }
            for t, s, r, m in healthy
        ]
    }
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
        given, _ = addon_forwarded_values(
            read((TEMPLATE / "environments" / "prod.yaml").read_text()), canonical_kai_values()
        )
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
    config = _kai_config(spec)
    api = "kai.scheduler/v1"
    return _managed(
        config,
        _entry(
            KAI_OPERATOR, api, OPERATOR_RERENDERED, _without(_owned(config, "spec"), "spec", "admission", "gpuSharing")
        ),
        # its status write reporting her edit reconciled (the audit log's last write to kai-config/status)
        _entry(KAI_OPERATOR, api, EDITED_BY_HAND, _owned(config, "status"), "status"),
        _entry("kubectl-edit", api, EDITED_BY_HAND, _only("spec", "admission", "gpuSharing")),
    )


def _prod_node(name: str) -> dict[str, Any]:
    """A GPU node as the kubelet and the GPU operator label it; gpu-node-2 also labelled by hand, in the wrong
    case (NVCA-S-012)."""
    node = _node(name, "True" if name == "gpu-node-2" else None)
    hostname = {"f:metadata": {"f:labels": {".": {}, "f:kubernetes.io/hostname": {}}}}  # it created the node
    entries = [
        _entry("kubelet", "v1", CREATED, hostname),
        _entry("kubelet", "v1", CREATED, _owned(node, "status"), "status"),
        _entry("gpu-operator", "v1", CREATED, _only("metadata", "labels", "nvidia.com/gpu.present")),
    ]
    if name == "gpu-node-2":
        entries.append(
            _entry("kubectl-label", "v1", LABELLED_BY_HAND, _only("metadata", "labels", "nvca.nvcf.nvidia.io/schedule"))
        )
    return _managed(node, *entries)


def prod_addon_snapshot() -> list[dict[str, Any]]:
    violation = (
        "CPU resource violation for queue default-parent-queue: expected limit=-1, quota=-1, "
        "overQuotaWeight=1, got limit=-1, quota=0, overQuotaWeight=1"
    )
    first_install = {"global": {"registry": "ghcr.io/kai-scheduler/kai-scheduler"}}
    upgraded = _canonical_values()
    old = {
        "global": {
            "registry": "registry.example.com/kai",
            "imagePullSecrets": [{"name": "regcred"}],
            "registryPassword": "hunter2-do-not-print",
        }
    }
    spec_gates = [g for g in STACK_GATES if g != "DynamicGPUDiscovery"]
    items = [
        *_crds(),
        # First installed with chart defaults, then upgraded with the guide's values: queues kept quota 0.
        _helm_installed_queue("default-parent-queue", CHART_DEFAULT_TRIPLE),
        _helm_installed_queue("default-queue", CHART_DEFAULT_TRIPLE, "default-parent-queue"),
        _shard(
            {
                "partitionLabelValue": "",
                "placementStrategy": {"gpu": "binpack", "cpu": "binpack"},
                "plugins": {"nodeplacement": {"arguments": {"gpu": "binpack", "cpu": "spread"}}},
                "actions": {"preempt": {"enabled": False}, "consolidation": {"enabled": False}},
            }
        ),
        _prod_kai_config(),
        _release(
            "kai-scheduler", "kai-scheduler", 1, "superseded", "v0.16.7", first_install, (KAI_INSTALLED, KAI_INSTALLED)
        ),
        _release("kai-scheduler", "kai-scheduler", 2, "deployed", "v0.16.7", upgraded, (KAI_INSTALLED, KAI_UPGRADED)),
        _release("kai", "runai", 4, "deployed", "v0.14.0", old),  # a second KAI release
        _obj(
            "v1",
            "Secret",
            "nvcr-pull-secret",
            "nvca-operator",
            type="kubernetes.io/dockerconfigjson",
            data={".dockerconfigjson": "eyJhdXRocyI6e319"},
        ),  # never read, never printed
        # The rendered list (ConfigMap, spec) predates the add-on and misses KAIScheduler; someone turned
        # the gate on by hand with an override, which the next Helm upgrade will wipe.
        _dto(STACK_GATES),
        _backend(spec_gates, [*spec_gates, "KAIScheduler"], "Unknown", overrides=[*spec_gates, "KAIScheduler"]),
        _obj(
            "v1",
            "Namespace",
            "nvcf-backend",
            metadata={"labels": {"nvca.nvcf.nvidia.io/workload-instance-type": "gpu"}},
        ),
        *[_prod_node(f"gpu-node-{i}") for i in range(1, 5)],
        # The 401 window (KAI-Scheduler #1536): an upgrade re-created the scheduler's ServiceAccount after the
        # pod started, so the token the pod holds belongs to the deleted account until the pod restarts.
        # (the account first: an API server admits a pod only once its ServiceAccount exists)
        _obj(
            "v1",
            "ServiceAccount",
            "kai-scheduler",
            "kai-scheduler",
            metadata={"creationTimestamp": "2026-11-30T02:14:00Z"},
        ),
        _service_account_pod(
            _pod(
                "kai-scheduler-default-7d9f5c6b8-x2k4q",
                "kai-scheduler",
                "default-scheduler",
                "Running",
                queue=None,
                nvcf=False,
            ),
            "kai-scheduler",
            started=CREATED,
        ),
        _pod("binder-5c6b8", "kai-scheduler", "default-scheduler", "Running", queue=None, nvcf=False),
        _pod("fn-llama-0", "nvcf-backend", "default-scheduler", "Running", queue=None, created="2026-09-20T10:00:00Z"),
        _pod("fn-llama-1", "nvcf-backend", "kai-scheduler", "Pending", queue="default-queue", ready=False),
        _obj(
            "v1",
            "Event",
            "fn-llama-1.17a",
            "nvcf-backend",
            reason="Unschedulable",
            type="Warning",
            involvedObject={"kind": "Pod", "namespace": "nvcf-backend", "name": "fn-llama-1"},
            message="0/4 nodes are available: 4 node(s) didn't have free GPUs.",
        ),
        {
            "apiVersion": "kai-gitops/v1",
            "kind": "NVCAHealthz",
            "metadata": {"name": "nvca"},
            "httpStatus": 503,
            "body": {
                "Status": "unhealthy",
                "Components": {"kai-scheduler-queues": {"Status": "unhealthy", "Errors": [violation]}},
            },
        },
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
        _shard(
            {
                "placementStrategy": {"gpu": "binpack", "cpu": "binpack"},
                "plugins": {"nodeplacement": {"arguments": {"gpu": "binpack", "cpu": "spread"}}},
                "actions": {"preempt": {"enabled": False}, "consolidation": {"enabled": False}},
            }
        ),
        _kai_config(_rendered_kai_config(addon=False)),
        _release("kai-scheduler", "kai-scheduler", 1, "deployed", "v0.14.7", values),
        _dto(gates),
        _backend(
            [g for g in gates if g != "DynamicGPUDiscovery"],
            [g for g in gates if g != "DynamicGPUDiscovery"],
            "healthy",
        ),
        _node("lab-gpu-1", "true"),
        _node("lab-gpu-2", "true"),
        _node("lab-cpu-1", None),
        _pod("kai-scheduler-default-1", "kai-scheduler", "default-scheduler", "Running", queue=None, nvcf=False),
        _pod("fn-a-0", "nvcf-backend", "kai-scheduler", "Running", queue="default-queue"),
        {
            "apiVersion": "kai-gitops/v1",
            "kind": "NVCAHealthz",
            "metadata": {"name": "nvca"},
            "httpStatus": 200,
            "body": {"Status": "healthy", "Components": {"kai-scheduler-queues": {"Status": "healthy", "Errors": []}}},
        },
    ]


TAKEN_AT = "2026-12-01T07:00:00.000000Z"


def write_snapshots(folder: Path) -> None:
    yaml = YAML()
    yaml.default_flow_style = False
    folder.mkdir(parents=True, exist_ok=True)
    for name, items in (("prod-addon", prod_addon_snapshot()), ("lab-standalone", lab_standalone_snapshot())):
        with (folder / f"{name}.yaml").open("w") as out:
            out.write(
                f"# Demo live snapshot of cluster {name}; regenerate: python repo-templates/demo/build.py "
                "snapshots repo-templates/demo/snapshots\n"
            )
            # When the demo cluster was read, after the demo audit log's last write: the log is cut off there.
            taken = {"annotations": {"kai-gitops.io/taken-at": TAKEN_AT}}
            yaml.dump({"apiVersion": "v1", "kind": "List", "metadata": taken, "items": items}, out)


# -- the prod cluster's audit log --------------------------------------------------------------


def write_audit_log(path: Path) -> None:
    """The prod cluster's audit log over the day of the upgrade, as the API server's log backend writes it (JSON
    lines of audit.k8s.io/v1 Events, at level Metadata): CI's `helm upgrade`, the KAI operator re-rendering
    kai-config, the cluster's own components, alice's `kubectl edit` of kai-config, then kai-gitops reading."""
    events = []
    for number, (at, who, verb, resource, name, namespace, subresource, query) in enumerate(_audited_requests()):
        for stage in ("RequestReceived", "ResponseComplete"):  # the log backend writes both stages of a request
            events.append(
                _audit_event(number, at, WRITERS[who], verb, resource, name, namespace, subresource, query, stage)
            )
    path.write_text("".join(json.dumps(event, separators=(",", ":")) + "\n" for event in events))  # as Go's json


# who: (username, groups, user agent, source IP)
WRITERS = {
    "ci": ("ci-deployer", ["ci", "system:authenticated"], "Helm/3.19.0", "10.0.3.3"),
    "operator": (
        "system:serviceaccount:kai-scheduler:kai-operator",
        ["system:serviceaccounts", "system:serviceaccounts:kai-scheduler", "system:authenticated"],
        "operator/v0.16.7 (linux/amd64) kubernetes/$Format",
        "10.244.0.12",
    ),
    "queue-controller": (
        "system:serviceaccount:kai-scheduler:queue-controller",
        ["system:serviceaccounts", "system:serviceaccounts:kai-scheduler", "system:authenticated"],
        "queue-controller/v0.16.7 (linux/amd64) kubernetes/$Format",
        "10.244.0.14",
    ),
    "controller-manager": (
        "system:kube-controller-manager",
        ["system:authenticated"],
        "kube-controller-manager/v1.34.2 (linux/amd64) kubernetes/0b3f2e1/leader-election",
        "10.0.1.10",
    ),
    "kubelet": (
        "system:node:gpu-node-2",
        ["system:nodes", "system:authenticated"],
        "kubelet/v1.34.2 (linux/amd64) kubernetes/0b3f2e1",
        "10.0.2.12",
    ),
    "alice": (
        "alice@example.com",
        ["oidc:platform-admins", "system:authenticated"],
        "kubectl/v1.34.2 (linux/amd64) kubernetes/0b3f2e1",
        "10.0.0.7",
    ),
    "kai-gitops": (
        "system:serviceaccount:kai-gitops:kai-gitops",
        ["system:serviceaccounts", "system:serviceaccounts:kai-gitops", "system:authenticated"],
        "kai-gitops/0.1.0 (diff)",
        "10.244.0.31",
    ),
}
SECRETS, ACCOUNTS, NODES = ("", "v1", "secrets"), ("", "v1", "serviceaccounts"), ("", "v1", "nodes")
CONFIGS, QUEUES = ("kai.scheduler", "v1", "configs"), ("scheduling.run.ai", "v2", "queues")
LEASES = ("coordination.k8s.io", "v1", "leases")


def _audited_requests() -> list[tuple[str, str, str, tuple[str, str, str], str, str | None, str | None, str]]:
    """(time, who, verb, resource, name, namespace, subresource, query) of each request, in the log's order."""
    release, ns = "sh.helm.release.v1.kai-scheduler", "kai-scheduler"
    return [
        ("2026-11-30T02:13:57.911", "ci", "create", SECRETS, f"{release}.v2", ns, None, ""),
        ("2026-11-30T02:13:59.204", "operator", "delete", ACCOUNTS, "kai-scheduler", ns, None, ""),
        ("2026-11-30T02:14:00.031", "operator", "create", ACCOUNTS, "kai-scheduler", ns, None, ""),
        ("2026-11-30T02:14:01.518", "ci", "update", SECRETS, f"{release}.v1", ns, None, ""),
        ("2026-11-30T02:14:03.377", "operator", "update", CONFIGS, "kai-config", None, None, ""),
        ("2026-11-30T02:14:03.902", "operator", "update", CONFIGS, "kai-config", None, "status", ""),
        ("2026-11-30T02:14:04.113", "ci", "update", SECRETS, f"{release}.v2", ns, None, ""),
        ("2026-11-30T06:00:12.640", "queue-controller", "update", QUEUES, "default-queue", None, "status", ""),
        ("2026-11-30T09:30:05.007", "kubelet", "patch", NODES, "gpu-node-2", None, "status", ""),
        (
            "2026-11-30T11:12:44.350",
            "controller-manager",
            "update",
            LEASES,
            "kube-controller-manager",
            "kube-system",
            None,
            "",
        ),
        ("2026-11-30T14:01:38.725", "alice", "get", CONFIGS, "kai-config", None, None, ""),
        ("2026-11-30T14:02:11.096", "alice", "patch", CONFIGS, "kai-config", None, None, "?fieldManager=kubectl-edit"),
        ("2026-11-30T14:02:11.410", "operator", "update", CONFIGS, "kai-config", None, "status", ""),
        ("2026-12-01T06:00:09.518", "kai-gitops", "list", QUEUES, "", None, None, ""),
        ("2026-12-01T06:00:09.604", "kai-gitops", "get", CONFIGS, "kai-config", None, None, ""),
    ]


def _audit_event(
    number: int,
    at: str,
    writer: tuple[str, list[str], str, str],
    verb: str,
    resource: tuple[str, str, str],
    name: str,
    namespace: str | None,
    subresource: str | None,
    query: str,
    stage: str,
) -> dict[str, Any]:
    """One Event, its keys in the order of the API server's Go struct; ids derived from `number` (same bytes on
    every build)."""
    username, groups, agent, source_ip = writer
    group, version, plural = resource
    path = (
        (f"/apis/{group}/{version}" if group else f"/api/{version}")
        + (f"/namespaces/{namespace}" if namespace else "")
        + f"/{plural}"
    )
    path += (f"/{name}" if name else "") + (f"/{subresource}" if subresource else "")
    ref = {
        "resource": plural,
        **({"namespace": namespace} if namespace else {}),
        **({"name": name} if name else {}),
        **({"apiGroup": group} if group else {}),
        "apiVersion": version,
        **({"subresource": subresource} if subresource else {}),
    }
    received = datetime.fromisoformat(at + "000+00:00")
    event: dict[str, Any] = {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": "Metadata",
        "auditID": str(uuid.uuid5(uuid.NAMESPACE_URL, f"kai-gitops-demo/audit/{number}")),
        "stage": stage,
        "requestURI": path + query,
        "verb": verb,
        "user": {
            "username": username,
            "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"kai-gitops-demo/{username}")),
            "groups": groups,
        },
        "sourceIPs": [source_ip],
        "userAgent": agent,
        "objectRef": ref,
    }
    if stage == "ResponseComplete":
        event["responseStatus"] = {"metadata": {}, "code": 201 if verb == "create" else 200}
    finished = received + timedelta(milliseconds=0 if stage == "RequestReceived" else 6)
    event["requestReceivedTimestamp"] = received.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    event["stageTimestamp"] = finished.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    event["annotations"] = {"authorization.k8s.io/decision": "allow", "authorization.k8s.io/reason": ""}
    return event


if __name__ == "__main__":
    builders = {
        "repo": build_repo,
        "snapshots": write_snapshots,
        "audit-log": write_audit_log,
        "charts": build_charts_repo,
    }
    if len(sys.argv) != 3 or sys.argv[1] not in builders:
        raise SystemExit(__doc__)
    builders[sys.argv[1]](Path(sys.argv[2]))
