"""A Queue or SchedulingShard Git declares, on a cluster where KAI Resource Management runs (KAI-D-010).

KRM (model/krm.py) treats Queues and SchedulingShards as what its Projects, Departments and NodePools generate:
a Queue Git keeps is either KRM's already (its project- or department-controller manages it) or one KRM takes
over when a Project or Department would use its name; a SchedulingShard is adopted and its spec overwritten.
Either way kai-gitops and KRM would fight over it. Detection only: KRM is installed when one of its CRDs is
served; an object carrying KRM's opt-out label (`kai.resources/resource-manual-override` on a Queue,
`kai.scheduler/ignore-shard-for-krm` on a SchedulingShard) is left to Git and not reported, and every finding
suggests the label. The fields KRM already manages are also held from the plan (checks/ownership.py).
"""

from __future__ import annotations

from collections.abc import Iterator

from reconciler.core.refs import Location, ObjectRef
from reconciler.core.resources import QUEUE, SCHEDULING_SHARD, queue_ref
from reconciler.findings.builtin_rules import KRM_MANAGED
from reconciler.findings.finding import Action, Finding, Fix, Kind
from reconciler.model.desired import DesiredCluster
from reconciler.model.krm import CRDS, QUEUE_MANAGERS, QUEUE_OPT_OUT, SHARD_MANAGERS, SHARD_OPT_OUT
from reconciler.model.live import LiveState


def krm_installed(live: LiveState) -> bool:
    return any(crd in live.crds for crd in CRDS)


def krm_findings(desired: DesiredCluster, live: LiveState) -> list[Finding]:
    if not krm_installed(live):
        return []
    return [*_queues(desired, live), *_shards(desired, live)]


def _queues(desired: DesiredCluster, live: LiveState) -> Iterator[Finding]:
    for queue in desired.queues:
        name = queue.spec.name
        if live.queue_labels.get(name, {}).get(QUEUE_OPT_OUT) == "true":
            continue
        manager = _krm_manager(live, QUEUE.kind, name, QUEUE_MANAGERS)
        path = next(iter(queue.paths.values()), ())
        if manager:
            why = (f"KAI Resource Management manages it (manager {manager}): it rewrites the Queue's labels, owner "
                   "reference and spec from the Project or Department that generates it")
        else:
            why = ("KAI Resource Management takes over a Queue no Project or Department owns when one of them would "
                   "use its name (<owner>-<nodepool>, or <owner> on the default node pool)")
        yield _finding(desired, queue_ref(name), desired.locate(queue.doc, path), why, manager,
                       f"declare it as a spec.queues[] entry of its Project or Department (deserved, limit, "
                       f"overQuotaWeight), or keep it Git's: kubectl label queue {name} {QUEUE_OPT_OUT}=true")


def _shards(desired: DesiredCluster, live: LiveState) -> Iterator[Finding]:
    declared: list[tuple[str, Location | None]] = []
    if desired.shard is not None:
        declared.append(("default", desired.locate(desired.shard.doc, desired.shard.path)))
    declared += [(m.name, desired.locate(m.doc, ())) for m in desired.kai_manifests if m.kind == SCHEDULING_SHARD.kind]
    for name, location in declared:
        shard = live.shards.get(name)
        if shard is not None and shard.labels.get(SHARD_OPT_OUT) == "true":
            continue
        manager = _krm_manager(live, SCHEDULING_SHARD.kind, name, SHARD_MANAGERS)
        why = (f"KAI Resource Management manages it (manager {manager}) from NodePool {name}" if manager else
               "KAI Resource Management adopts every SchedulingShard that exists when it starts")
        yield _finding(desired, SCHEDULING_SHARD.ref(name), location,
                       f"{why} and overwrites its spec wholesale", manager,
                       f"declare it as NodePool {name}'s spec.schedulingShardConfig, or keep it Git's: "
                       f"kubectl label schedulingshard {name} {SHARD_OPT_OUT}=true")


def _krm_manager(live: LiveState, kind: str, name: str, managers: tuple[str, ...]) -> str | None:
    entries = live.managers.get((kind, name))
    found = [e.manager for e in entries.entries if e.manager in managers] if entries else []
    return found[0] if found else None


def _finding(desired: DesiredCluster, ref: ObjectRef, location: Location | None, why: str, manager: str | None,
             remedy: str) -> Finding:
    message = f"{ref} is declared in Git on a cluster where KAI Resource Management runs: {why}"
    return KRM_MANAGED.finding(Kind.DRIFT, message, desired.name, subject=ref, location=location,
                               fix=Fix(Action.NONE, remedy), extra={"krmManager": manager})
