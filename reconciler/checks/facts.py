"""The compact input document every policy sees (contract: policies/FACTS.md, version 1).

Rego never receives raw objects: a 50,000-pod cluster becomes a few hundred summarised entries here.
"""

from __future__ import annotations

from reconciler.checks.nvca import Verdict
from reconciler.core.jsonvalue import JSONLike
from reconciler.core.redact import redact
from reconciler.core.resources import NVCF_BACKEND, POD_GROUP, QUEUE, SCHEDULING_SHARD, TOPOLOGY
from reconciler.model.chart_keys import era_of
from reconciler.model.desired import DesiredCluster, ExpectedQueue, QueueOrigin
from reconciler.model.gates import SignedGates
from reconciler.model.krm import TO_QUEUE_FIELD, GeneratedQueue, entry_path, generated_queues
from reconciler.model.live import LiveState, PodSummary
from reconciler.model.queues import RESOURCES, Allocation, QueueSpec, SnapshotQueues
from reconciler.model.values import chart_defaults

FACTS_VERSION = 1
# The KAI values subtrees the static rules judge (the queues, the shard, how kai-config is produced).
EFFECTIVE_SECTIONS = ("scheduler", "defaultQueue", "defaultShard", "kaiConfig", "kaiConfigDeployer")
LABEL_CAP = 500
POD_CAP = 200
CRDS = tuple(r.crd_name for r in (QUEUE, SCHEDULING_SHARD, POD_GROUP, TOPOLOGY, NVCF_BACKEND))  # policies/FACTS.md
Facts = dict[str, JSONLike]  # the policies' input document, as policies/FACTS.md describes it


def build_facts(
    cluster: str, desired: DesiredCluster | None, live: LiveState | None, prediction: Verdict | None
) -> Facts:
    facts: Facts = {
        "facts_version": FACTS_VERSION,
        "cluster": cluster,
        "scope": "live" if live is not None else "static",
    }
    if desired is not None:
        facts["desired"] = desired_facts(desired)
    if live is not None:
        selector = desired.shared.node_selector if desired is not None else None
        facts["live"] = live_facts(live, prediction, selector)
    return facts


def selector_matches(live: LiveState, selector: dict[str, str]) -> list[str]:
    """Nodes a shared-cluster intent's `nodeSelector` (matchLabels semantics) selects."""
    wanted = {f"{k}={v}" for k, v in selector.items()}
    return sorted(name for name, labels in live.node_labels.items() if wanted <= labels)


def desired_facts(d: DesiredCluster) -> Facts:
    gates = d.gates
    signed = SignedGates.of(gates.effective) if gates else None
    shared = d.shared
    return {
        "mode": d.config.mode,
        "docs": {doc_id: doc.file for doc_id, doc in d.docs.items()},
        "config_entry": ["clusters", d.config.index],
        "kai_chart_pin": d.config.kai_chart_version,
        "stack_kai_version": d.config.stack_kai_version if d.config.mode == "addon" or "env" in d.docs else None,
        "defaults_version": d.defaults_version,
        "addons": d.addons,
        "addons_doc": "env" if "env" in d.docs else None,
        "standalone_kai": d.config.kai_values_file is not None,
        "kai_upgrade_command": d.kai_upgrade_command,
        "kai_install_command": d.kai_install_command,
        "kai_values_doc": d.kai_values_doc,
        # Redacted: the facts may travel to an OPA server whose decision log keeps its input.
        "kai_values_user": redact(d.kai_values_user) if d.kai_values_doc else {},
        "kai_values_effective": redact({k: d.kai_values_effective.get(k) for k in EFFECTIVE_SECTIONS}),
        "kai_chart": {
            "era": era_of(d.config.kai_chart_version),
            "sections": sorted(chart_defaults(d.defaults_version)),
        },
        "kai_manifests": [{"kind": m.kind, "name": m.name, "doc": m.doc} for m in d.kai_manifests],
        "gates": {
            "doc": gates.doc if gates else None,
            "path": list(gates.path) if gates else [],
            "user": gates.user if gates else [],
            "effective": gates.effective if gates else [],
            "enabled": sorted(signed.enabled) if signed else [],
            "disabled": sorted(signed.disabled) if signed else [],
        },
        "shared_cluster": {"intent": shared.intent, "nodes": list(shared.nodes), "selector": shared.node_selector},
        "extra_queues": [_queue_facts(q.spec) | {"doc": q.doc} for q in d.queues if q.origin == QueueOrigin.QUEUE_FILE],
        "queues": [_git_queue_facts(q) for q in d.queues] + _krm_queue_facts(d),
    }


def live_facts(live: LiveState, prediction: Verdict | None, selector: dict[str, str] | None = None) -> Facts:
    """`selector`: the shared-cluster intent's node selector, whose matches the rules check."""
    backend = live.backends[0] if live.backends else None
    labelled = sorted(live.schedule_labels.items())
    nodes: Facts = {
        "total": live.nodes_total,
        "schedule_label": [{"name": n, "value": v} for n, v in labelled[:LABEL_CAP]],
        "schedule_label_count": len(labelled),
        # complete, never capped: shared-cluster rules test node membership against it
        "schedule_true": [n for n, v in labelled if v == "true"],
    }
    if selector:  # absent, not null, when there is nothing to resolve (the rules iterate it)
        nodes["selector_matches"] = selector_matches(live, selector)
    return {
        "queue_kind_served": live.queue_kind_served,
        "crds": {name: name in live.crds for name in CRDS},
        "queues": [
            _queue_facts(q) | _allocation_facts(live.allocations.get(q.name))
            for q in sorted(live.queues.values(), key=lambda q: q.name)
        ],
        "nvca_prediction": prediction.to_dict() if prediction else None,
        "healthz": _healthz_facts(live),
        "releases": [
            {
                "name": r.name,
                "namespace": r.namespace,
                "revision": r.revision,
                "status": r.status,
                "latest_revision": r.latest_revision,
                "latest_status": r.latest_status,
                "chart_name": r.chart_name,
                "chart_version": _v(r.chart_version),
            }
            for r in live.releases
        ],
        "release_errors": list(live.release_errors),
        "release_search": (
            {"all_namespaces": True, "namespaces": [], "reason": ""}
            if live.release_namespaces is None
            else {
                "all_namespaces": False,
                "namespaces": list(live.release_namespaces),
                "reason": live.release_search_reason,
            }
        ),
        "gate_hops": {
            "configmap": live.dto_capabilities,
            "spec": backend.spec_gates if backend else None,
            "overrides": backend.override_gates if backend else None,
            "status": backend.status_gates if backend else None,
        },
        "backend": {
            "count": len(live.backends),
            "name": backend.name if backend else None,
            "namespace": backend.namespace if backend else None,
            "agent_status": backend.agent_status if backend else None,
        },
        "nodes": nodes,
        "nvcf_pods": _pod_facts(live),
        "kai_pods": [{"name": p.name, "ready": p.ready, "phase": p.phase} for p in live.kai_pods],
    }


def add_snapshot_queues(facts: Facts, snapshot: SnapshotQueues, base_queues: list[QueueSpec] | None) -> None:
    """`check --live-snapshot`: the snapshot's Queues beside Git's in a static evaluation (`live_queues`), and,
    with --base, the base's queues (`desired.base_queues`): a PR is judged on the numbers it changes."""
    taken = snapshot.taken_at.strftime("%Y-%m-%d %H:%M UTC") if snapshot.taken_at else None
    facts["live_queues"] = {
        "source": snapshot.source,
        "taken_at": taken,
        "queues": [
            _queue_facts(q) | _allocation_facts(snapshot.allocations.get(q.name))
            for q in sorted(snapshot.queues.values(), key=lambda q: q.name)
        ],
    }
    section = facts.get("desired")
    if base_queues is not None and isinstance(section, dict):
        section["base_queues"] = [_queue_facts(q) for q in base_queues]


def _v(version: str) -> str:
    """Release CI tags charts `v0.16.7`; a hand-packaged chart may say `0.16.7`. The pin always has the v."""
    return version if not version or version.startswith("v") else f"v{version}"


def _queue_facts(q: QueueSpec) -> Facts:
    return {
        "name": q.name,
        "parent": q.parent,
        "has_resources": q.resources is not None,
        "resources": {res: q.triple(res).to_dict() for res in RESOURCES},
    }


def _git_queue_facts(q: ExpectedQueue) -> Facts:
    """Every Queue Git declares (the default queues from the values too), with where each number is set."""
    return _queue_facts(q.spec) | {
        "doc": q.doc,
        "origin": str(q.origin),
        "paths": {key: list(path) for key, path in q.paths.items()},
    }


def _krm_queue_facts(d: DesiredCluster) -> list[Facts]:
    """The Queues Git's KAI Resource Management Projects and Departments (krmFiles) generate, in the Queue's terms
    (deserved -> quota) with each number's path in the Project or Department: the queue rules judge them as they
    judge queue files. A name a Queue file also declares is left to that file (KAI-K-001 reports the clash)."""
    declared = {q.spec.name for q in d.queues}
    generated = [g for g in generated_queues(d.krm) if g.owner.doc is not None and g.spec.name not in declared]
    unique = {g.spec.name: g for g in reversed(generated)}  # two entries of one name: the first is judged
    return [
        _queue_facts(g.spec) | {"doc": g.owner.doc, "origin": f"krm-{g.owner.kind.lower()}", "paths": _krm_paths(g)}
        for g in generated
        if unique[g.spec.name] is g
    ]


def _krm_paths(generated: GeneratedQueue) -> dict[str, list[str | int]]:
    entry = generated.entry
    parent: list[str | int] = ["spec", "parent"] if generated.owner.parent else list(entry_path(entry, "nodepool"))
    paths: dict[str, list[str | int]] = {"parent": parent}
    for res in RESOURCES:
        for krm_field, queue_field in TO_QUEUE_FIELD.items():
            paths[f"{res}.{queue_field}"] = list(entry_path(entry, "resources", res, krm_field))
    return paths


def _allocation_facts(allocation: Allocation | None) -> Facts:
    """What the queue's running work holds now, in its spec's units; null when KAI wrote no status."""
    if allocation is None:
        return {"allocated": None, "allocated_non_preemptible": None}
    return {"allocated": dict(allocation.allocated), "allocated_non_preemptible": dict(allocation.non_preemptible)}


def _healthz_facts(live: LiveState) -> Facts | None:
    h = live.healthz
    if h is None:
        return None
    status, errors = h.queue_component()
    return {
        "reachable": h.reachable,
        "http_status": h.http_status,
        "status": status.lower() if isinstance(status, str) else None,
        "errors": errors,
    }


def _pod_facts(live: LiveState) -> Facts:
    pods = live.nvcf_pods
    not_on_kai = [p for p in pods if p.scheduler != "kai-scheduler"]
    missing = [p for p in pods if p.scheduler == "kai-scheduler" and not p.queue_label]
    pending = [p for p in pods if p.phase == "Pending"]
    return {
        "total": len(pods),
        "queues_used": sorted({p.queue_label for p in pods if p.queue_label}),
        "not_on_kai": [_pod(p) | {"scheduler": p.scheduler, "age_s": p.age_s} for p in not_on_kai[:POD_CAP]],
        "not_on_kai_count": len(not_on_kai),
        "missing_queue_label": [_pod(p) for p in missing[:POD_CAP]],
        "missing_queue_label_count": len(missing),
        "pending": [
            _pod(p)
            | {"scheduler": p.scheduler, "reason": "Unschedulable" if _why(live, p) else "", "message": _why(live, p)}
            for p in pending[:POD_CAP]
        ],
        "pending_count": len(pending),
    }


def _pod(p: PodSummary) -> Facts:
    return {"namespace": p.namespace, "name": p.name}


def _why(live: LiveState, p: PodSummary) -> str:
    return live.unschedulable.get((p.namespace, p.name), "")
