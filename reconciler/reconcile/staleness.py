"""The per-field staleness rule, shared by the pre-write check and the re-check after a 409 Conflict.

A change is judged by the fields it plans to change, never by resourceVersion: KAI and the kubelet
rewrite status and unrelated labels all the time, so only a planned field that no longer holds the plan's
*before* (or already holds its *after*) says anything about the plan.
"""

from __future__ import annotations

from typing import Any

from reconciler.core.show import show_value
from reconciler.plans.plan import Change, FieldChange, Operation
from reconciler.plans.values import current_value, same_value


def change_state(change: Change, obj: dict[str, Any] | None, stale: list[str]) -> str:
    """pending (every planned field holds its before), done (every one its after) or stale (named in `stale`)."""
    if change.operation is Operation.CREATE:
        if obj is None:
            return "pending"
        fields = [_field_state(change, obj, f) for f in change.fields]
        if all(s == "after" for s in fields):
            return "done"
        stale.append(f"{change.ref} exists now (the plan creates it)")
        return "stale"
    if obj is None:
        stale.append(f"{change.ref} no longer exists")
        return "stale"
    states = [_field_state(change, obj, f) for f in change.fields]
    if all(s == "before" for s in states):
        return "pending"
    if all(s == "after" for s in states):
        return "done"
    for f, s in zip(change.fields, states, strict=True):
        if s != "before":
            now = current_value(change.ref, obj, f.path)
            stale.append(
                f"{change.ref} {f.dotted()} is {show_value(now, quote_strings=True)}, "
                f"the plan expected {show_value(f.before, quote_strings=True)}"
            )
    return "stale"


def _field_state(change: Change, obj: dict[str, Any], f: FieldChange) -> str:
    now = current_value(change.ref, obj, f.path)
    if _same(now, f.before):
        return "before"
    if _same(now, f.after):
        return "after"
    return "other"


def _same(a: object, b: object) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and same_value(a, b))
