"""Git's Queues and SchedulingShards against KAI Resource Management (KAI-K-001..004, and KAI-D-010).

KRM (model/krm.py) treats Queues and SchedulingShards as what its Projects, Departments and NodePools generate.
With those objects known (kept in Git as krmFiles, or read from the cluster or its snapshot; Git's win by name),
the Queues and shards they generate are computed, and each Git Queue or shard is judged against them:

- KAI-K-001: a Git Queue whose name a Project or Department generates: KRM owns it or takes it over.
- KAI-K-002: a Git Queue KRM generates but Git parents elsewhere, or a Git Queue hung under a queue KRM
  generates: the trees contradict (reported instead of KAI-K-001 for the same queue).
- KAI-K-003: a Git SchedulingShard a NodePool owns.
- KAI-K-004: a Project's queue Git declares whose department has no queue for its node pool.

KAI-D-010 is what is left: on a cluster serving KRM's CRDs, a Git Queue or shard no known KRM object explains
is still reported when KRM's controllers manage it (managedFields) or may take it over (a Queue while
allowExternalQueues is off; a shard, which the install adopts). One finding per object: a K finding replaces
KAI-D-010. The opt-out labels (on the live object or on Git's manifest) are honoured, but never on the
SchedulingShard `default`, which KRM always manages. Fields KRM manages are also held from the plan
(checks/ownership.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from reconciler.core.refs import Location, ObjectRef, YamlPath
from reconciler.core.resources import DEPARTMENT, PROJECT, QUEUE, SCHEDULING_SHARD, queue_ref
from reconciler.findings.builtin_rules import KRM_MANAGED
from reconciler.findings.finding import Action, Finding, Fix, Kind
from reconciler.findings.krm_rules import (
    KRM_PROJECT_UNPARENTED,
    KRM_QUEUE_NAME_TAKEN,
    KRM_QUEUE_TREE,
    KRM_SHARD_OWNED,
)
from reconciler.findings.rules import RuleMeta
from reconciler.model.desired import DesiredCluster, ExpectedQueue, QueueOrigin
from reconciler.model.krm import (
    CRDS,
    QUEUE_MANAGERS,
    QUEUE_OPT_OUT,
    QUEUE_OWNER_LABELS,
    SHARD_MANAGERS,
    SHARD_OPT_OUT,
    GeneratedQueue,
    KrmObjects,
    Owner,
    entry_path,
    generated_queues,
    queue_name,
)
from reconciler.model.live import LiveState

DEFAULT_SHARD = "default"


def krm_installed(live: LiveState) -> bool:
    return any(crd in live.crds for crd in CRDS)


def krm_findings(desired: DesiredCluster, live: LiveState | None) -> list[Finding]:
    """`live`: the cluster, its snapshot, or None (the PR check without one: Git's KRM objects alone)."""
    installed = live is not None and krm_installed(live)
    if not installed and not desired.krm:
        return []
    objects = desired.krm.over(live.krm) if live is not None else desired.krm
    context = _Context(desired, live, objects, {g.spec.name: g for g in generated_queues(objects)}, installed)
    return [*_queues(context), *_shards(context), *_unparented(context)]


@dataclass(frozen=True)
class _Context:
    desired: DesiredCluster
    live: LiveState | None
    objects: KrmObjects
    generated: dict[str, GeneratedQueue]
    installed: bool  # the cluster serves KRM's CRDs (KAI-D-010 needs it)


# -- Queues ------------------------------------------------------------------------------------------------


def _queues(ctx: _Context) -> Iterator[Finding]:
    for queue in ctx.desired.queues:
        name = queue.spec.name
        if _queue_labels(ctx, queue).get(QUEUE_OPT_OUT) == "true":
            continue
        manager = _krm_manager(ctx.live, QUEUE.kind, name, QUEUE_MANAGERS)
        krm_owned = manager is not None or bool(set(QUEUE_OWNER_LABELS) & set(_live_labels(ctx, name)))
        generated = ctx.generated.get(name)
        location = ctx.desired.locate(queue.doc, _queue_anchor(queue))
        if generated is not None and (krm_owned or not ctx.objects.allow_external_queues):
            yield _generated_queue(ctx, queue, generated, location, manager, krm_owned)
        elif (parent := ctx.generated.get(queue.spec.parent or "")) is not None:
            yield _under_krm_queue(ctx, queue, parent, location)
        elif ctx.installed and (krm_owned or not ctx.objects.allow_external_queues):
            yield _d010_queue(ctx, name, location, manager)


def _generated_queue(
    ctx: _Context,
    queue: ExpectedQueue,
    generated: GeneratedQueue,
    location: Location | None,
    manager: str | None,
    krm_owned: bool,
) -> Finding:
    name, owner, entry = queue.spec.name, generated.owner, generated.entry
    source = f"{owner.kind} {owner.name} spec.queues[{entry.index}] (node pool {entry.nodepool or '?'})"
    how = (
        f"KAI Resource Management manages it{f' (manager {manager})' if manager else ''}"
        if krm_owned
        else "KAI Resource Management takes it over (no Project or Department owns it yet, and allowExternalQueues "
        "is off): it rewrites its labels, owner reference and spec"
    )
    keep = f"or keep it Git's: kubectl label queue {name} {QUEUE_OPT_OUT}=true"
    if (queue.spec.parent or None) != generated.spec.parent:
        kai_parent = generated.spec.parent or "no parent (a root)"
        message = (
            f"{queue_ref(name)}: Git parents it to {queue.spec.parent or 'nothing (a root)'}, but {source} "
            f"generates it parented to {kai_parent}; {how}, so Git's tree is undone on its next pass"
        )
        remedy = f"set spec.parentQueue to {generated.spec.parent or 'nothing'} or move the queue into {source}, {keep}"
        return _finding(KRM_QUEUE_TREE, ctx, queue_ref(name), location, message, remedy, owner, manager)
    message = f"{queue_ref(name)} is declared in Git, and {source} generates a Queue of that name; {how}"
    remedy = (
        f"move its numbers to {source} (quota -> deserved; limit, overQuotaWeight as they are) and delete it "
        f"from Git, {keep}"
    )
    return _finding(KRM_QUEUE_NAME_TAKEN, ctx, queue_ref(name), location, message, remedy, owner, manager)


def _under_krm_queue(ctx: _Context, queue: ExpectedQueue, parent: GeneratedQueue, location: Location | None) -> Finding:
    name, owner = queue.spec.name, parent.owner
    message = (
        f"{queue_ref(name)}: Git parents it to {parent.spec.name}, which {owner.kind} {owner.name} generates; "
        f"KAI Resource Management keeps its trees apart from queues it does not own, and this queue takes a "
        f"share of {parent.spec.name}'s quota that no Project accounts for"
    )
    remedy = (
        f"declare it as a spec.queues[] entry of a Project under {owner.name} (its queue is then parented "
        f"for you), or parent it outside KRM's tree"
    )
    return _finding(KRM_QUEUE_TREE, ctx, queue_ref(name), location, message, remedy, owner, None)


def _d010_queue(ctx: _Context, name: str, location: Location | None, manager: str | None) -> Finding:
    if manager:
        why = (
            f"KAI Resource Management manages it (manager {manager}): it rewrites the Queue's labels, owner "
            "reference and spec from the Project or Department that generates it"
        )
    else:
        why = (
            "KAI Resource Management takes over a Queue no Project or Department owns when one of them would "
            "use its name (<owner>-<nodepool>, or <owner> on the default node pool)"
        )
    return _d010(
        ctx,
        queue_ref(name),
        location,
        why,
        manager,
        f"declare it as a spec.queues[] entry of its Project or Department (deserved, limit, "
        f"overQuotaWeight), or keep it Git's: kubectl label queue {name} {QUEUE_OPT_OUT}=true",
    )


def _queue_anchor(queue: ExpectedQueue) -> YamlPath:
    """Where the queue's name is written: its manifest's metadata.name, or the values key naming a default queue
    (both default queues' "parent" path is defaultQueue.parentName; the child's name is childName)."""
    if queue.origin == QueueOrigin.QUEUE_FILE:
        return ("metadata", "name")
    path = queue.paths["parent"]
    if path and path[-1] == "parentName" and queue.spec.parent is not None:
        return (*path[:-1], "childName")
    return path


def _queue_labels(ctx: _Context, queue: ExpectedQueue) -> dict[str, str]:
    """The Queue's labels as the cluster has them, with Git's manifest's over them (Git's are applied)."""
    labels = dict(_live_labels(ctx, queue.spec.name))
    if queue.origin == QueueOrigin.QUEUE_FILE:
        given = ctx.desired.docs[queue.doc].get(("metadata", "labels"))
        if isinstance(given, dict):
            labels.update({str(k): str(v) for k, v in given.items()})
    return labels


def _live_labels(ctx: _Context, name: str) -> dict[str, str]:
    return ctx.live.queue_labels.get(name, {}) if ctx.live is not None else {}


# -- SchedulingShards --------------------------------------------------------------------------------------


def _shards(ctx: _Context) -> Iterator[Finding]:
    desired = ctx.desired
    declared: list[tuple[str, Location | None, dict[str, str]]] = []
    if desired.shard is not None:
        declared.append((DEFAULT_SHARD, desired.locate(desired.shard.doc, desired.shard.path), {}))
    for m in desired.kai_manifests:
        if m.kind == SCHEDULING_SHARD.kind:
            labels = desired.docs[m.doc].get(("metadata", "labels"))
            given = {str(k): str(v) for k, v in labels.items()} if isinstance(labels, dict) else {}
            declared.append((m.name, desired.locate(m.doc, ("metadata", "name")), given))
    for name, location, git_labels in declared:
        manager = _krm_manager(ctx.live, SCHEDULING_SHARD.kind, name, SHARD_MANAGERS)
        pool = ctx.objects.nodepools.get(name)
        if pool is not None:
            yield _shard_owned(ctx, name, location, manager)
        elif ctx.installed and not (
            name != DEFAULT_SHARD and _shard_labels(ctx, name, git_labels).get(SHARD_OPT_OUT) == "true"
        ):
            why = (
                f"KAI Resource Management manages it (manager {manager}) from NodePool {name}"
                if manager
                else "KAI Resource Management adopts every SchedulingShard that exists when it is installed or upgraded"
            )
            yield _d010(
                ctx,
                SCHEDULING_SHARD.ref(name),
                location,
                f"{why} and overwrites its spec wholesale",
                manager,
                f"declare it as NodePool {name}'s spec.schedulingShardConfig, or keep it Git's: "
                f"kubectl label schedulingshard {name} {SHARD_OPT_OUT}=true (never honoured on default)",
            )


def _shard_owned(ctx: _Context, name: str, location: Location | None, manager: str | None) -> Finding:
    ref = SCHEDULING_SHARD.ref(name)
    message = (
        f"{ref} is declared in Git, and NodePool {name} owns the shard of that name: KAI Resource Management "
        f"writes its spec from the NodePool's schedulingShardConfig"
        f"{f' (manager {manager})' if manager else ''}, so Git's and KRM's settings fight"
    )
    remedy = f"move the shard's settings to NodePool {name} spec.schedulingShardConfig and drop it from Git"
    kind = _kind(ctx, ctx.objects.nodepools[name].doc, manager)
    return KRM_SHARD_OWNED.finding(
        kind,
        message,
        ctx.desired.name,
        subject=ref,
        location=location,
        fix=Fix(Action.NONE, remedy),
        extra={"krmManager": manager, "krmOwner": f"NodePool/{name}"},
    )


def _shard_labels(ctx: _Context, name: str, git_labels: dict[str, str]) -> dict[str, str]:
    live = ctx.live.shards.get(name) if ctx.live is not None else None
    return {**(live.labels if live is not None else {}), **git_labels}


# -- Projects whose queues have no department queue ---------------------------------------------------------


def _unparented(ctx: _Context) -> Iterator[Finding]:
    """Only the Projects Git declares: their entries have a line to point at."""
    pool = ctx.objects.default_node_pool
    for project in ctx.desired.krm.projects.values():
        department = ctx.objects.departments.get(project.parent or "")
        pools = {e.nodepool for e in department.queues} if department is not None else set()
        for entry in project.queues:
            if entry.nodepool in pools:
                continue
            name = queue_name(project, entry, pool)
            why = (
                f"its department {project.parent} has no queue for node pool {entry.nodepool}"
                if department is not None
                else f"its parent department {project.parent} is not known"
                if project.parent
                else "the Project names no parent department"
            )
            message = (
                f"{queue_ref(name)} of Project {project.name} (spec.queues[{entry.index}]) has no parent: "
                f"{why}, so the queue is a root of its own, unconstrained by any department"
            )
            location = ctx.desired.locate(project.doc, entry_path(entry, "nodepool"))
            remedy = (
                f"add a spec.queues[] entry for node pool {entry.nodepool} to Department {project.parent}"
                if department is not None
                else "set spec.parent to the Project's Department"
            )
            yield KRM_PROJECT_UNPARENTED.finding(
                Kind.VIOLATION,
                message,
                ctx.desired.name,
                subject=PROJECT.ref(project.name),
                location=location,
                fix=Fix(Action.NONE, remedy),
            )


# -- shared ------------------------------------------------------------------------------------------------


def _krm_manager(live: LiveState | None, kind: str, name: str, managers: tuple[str, ...]) -> str | None:
    entries = live.managers.get((kind, name)) if live is not None else None
    found = [e.manager for e in entries.entries if e.manager in managers] if entries else []
    return found[0] if found else None


def _finding(
    rule: RuleMeta,
    ctx: _Context,
    ref: ObjectRef,
    location: Location | None,
    message: str,
    remedy: str,
    owner: Owner,
    manager: str | None,
) -> Finding:
    kind = PROJECT if owner.kind == PROJECT.kind else DEPARTMENT
    return rule.finding(
        _kind(ctx, owner.doc, manager),
        message,
        ctx.desired.name,
        subject=ref,
        location=location,
        fix=Fix(Action.NONE, remedy),
        extra={"krmManager": manager, "krmOwner": f"{kind.kind}/{owner.name}"},
    )


def _kind(ctx: _Context, owner_doc: str | None, manager: str | None) -> Kind:
    """Drift only where the finding rests on the cluster: a KRM owner read live (no Git doc) or KRM's manager on
    the live object. Git's object against Git's KRM objects is a contradiction within Git: a violation, not
    'live differs from Git' (a Git-only check reads nothing live)."""
    return Kind.DRIFT if ctx.live is not None and (owner_doc is None or manager) else Kind.VIOLATION


def _d010(
    ctx: _Context, ref: ObjectRef, location: Location | None, why: str, manager: str | None, remedy: str
) -> Finding:
    message = f"{ref} is declared in Git on a cluster where KAI Resource Management runs: {why}"
    return KRM_MANAGED.finding(
        Kind.DRIFT,
        message,
        ctx.desired.name,
        subject=ref,
        location=location,
        fix=Fix(Action.NONE, remedy),
        extra={"krmManager": manager},
    )
