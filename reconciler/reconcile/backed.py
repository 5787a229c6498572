"""A saved plan is applied only as far as Git backs it: each of its changes must be one the planner makes now.

The plan's id is an unkeyed hash (anyone can hash edited content again) and validate.py only knows which
writes are allowed, not which are wanted: a saved `spec.parentQueue` naming a queue Git never mentions is a
valid write. So every planned field (object, path, after) must be one the fresh plan for this repository and
cluster also makes, or one the cluster already holds (an earlier run applied it: then nothing is written for
it). A field of an object that came or went since the plan is left to the staleness check, which refuses it
under its own message ("exists now", "no longer exists"). Anything else refuses the whole plan before any
request: a plan is applied whole or not at all, and a partly trusted plan is worse than a refused one.
"""

from __future__ import annotations

from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONValue
from reconciler.core.refs import ObjectRef
from reconciler.core.resources import CONFIG, QUEUE
from reconciler.core.show import show_value
from reconciler.model.kai_config import CONFIG_NAME
from reconciler.model.live import LiveState
from reconciler.plans.plan import Change, FieldChange, FieldPath, Operation, Plan
from reconciler.plans.values import KAI_SPEC_KINDS, queue_field, same_value, stored_value
from reconciler.plans.writable import LABEL_PATH


def check_backed_by_git(saved: Plan, fresh: Plan, live: LiveState, where: str) -> None:
    """UserError naming `where` and the first change of `saved` that neither `fresh` nor the cluster backs."""
    if (saved.cluster, saved.identity) != (fresh.cluster, fresh.identity):
        return  # a plan for another cluster is refused as such before anything is applied (preflight.py)
    planned: Planned = {(c.ref, c.operation, f.path): f.after for c in fresh.changes for f in c.fields}
    creates = {c.ref: {f.path for f in c.fields} for c in fresh.changes if c.operation is Operation.CREATE}
    for index, change in enumerate(saved.changes):
        for f in _unbacked(change, planned, creates, live):
            raise UserError(
                f"the saved plan's changes[{index}] ({change.operation.value} {change.ref} "
                f"{f.dotted()} = {show_value(f.after, quote_strings=True)}) is not a change the "
                f"repository backs now: {_why(saved, fresh)}; nothing was applied",
                where=where,
                hint="re-create the plan (`kai-gitops reconcile --plan-out FILE`) and review it",
            )


Planned = dict[tuple[ObjectRef, Operation, FieldPath], object]


def _unbacked(
    change: Change, planned: Planned, creates: dict[ObjectRef, set[FieldPath]], live: LiveState
) -> list[FieldChange]:
    """The fields of `change` Git does not back; a create must also leave out none of the planned create's
    fields (a queue created without the parent Git gives it is not the queue Git describes)."""
    unbacked = [f for f in change.fields if not _backed(change, f, planned, live)]
    if unbacked or change.operation is not Operation.CREATE or change.ref not in creates:
        return unbacked
    missing = creates[change.ref] - {f.path for f in change.fields}
    return [FieldChange(path, None, None) for path in sorted(missing)]


def _backed(change: Change, f: FieldChange, planned: Planned, live: LiveState) -> bool:
    key = (change.ref, change.operation, f.path)
    if key in planned and _same(planned[key], f.after):
        return True
    exists, now = _live_field(change, f, live)
    if exists != (change.operation is Operation.UPDATE):
        return True  # created or deleted meanwhile: the staleness check refuses it, or finds it applied
    return exists and _same(now, f.after)


def _live_field(change: Change, f: FieldChange, live: LiveState) -> tuple[bool, JSONValue]:
    """(does the object exist, the field's value in it) as the run read the cluster."""
    name, kind = change.ref.name, change.ref.kind
    if kind == QUEUE.kind:
        spec = live.queues.get(name)
        return (spec is not None, queue_field(spec, f.path) if spec is not None else None)
    if kind in KAI_SPEC_KINDS:
        kai = live.kai_config if kind == CONFIG.kind and name == CONFIG_NAME else live.shards.get(name)
        return (kai is not None, stored_value({"spec": kai.spec}, f.path) if kai is not None else None)
    if f.path != LABEL_PATH:  # validate.py allows no other write; a new kind must be taught here
        raise ValueError(f"no live value known for {change.ref} {f.dotted()}")
    return name in live.node_labels, live.schedule_labels.get(name)


def _why(saved: Plan, fresh: Plan) -> str:
    then = saved.git.commit if saved.git else None
    now = fresh.git.commit if fresh.git else None
    if then and now and then != now:
        return f"Git moved since the plan was made (commit {then[:12]}, now {now[:12]}), or the file was edited"
    return "the file was edited, or Git or the cluster changed since the plan was made"


def _same(a: object, b: object) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and same_value(a, b))
