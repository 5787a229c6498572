"""What a plan may contain: checked when the planner makes one and when a saved one is read (a saved plan is
input: it is checked, never trusted). Which kinds and fields may be written is writable.py's table."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from reconciler.core.errors import UserError
from reconciler.core.names import SUBDOMAIN_RULE, dns_subdomain
from reconciler.core.refs import ObjectRef
from reconciler.plans.plan import Change, FieldChange, FieldPath, Operation
from reconciler.plans.values import leaves, same_value
from reconciler.plans.writable import Values, planned_write, writable_summary

SPEC_VALUES = (Values.BOOLEAN, Values.TEXT, Values.NUMBER_OR_REMOVAL, Values.STRUCTURE)

# A plan's free text (a change's reason, a note) as the planner writes it: one short printable line. Anything
# else in a saved plan was written by someone else, for a person to read and perhaps act on.
TEXT_LIMIT = 512
RULE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def writable_field(ref: ObjectRef, operation: Operation, path: FieldPath) -> Values | None:
    """What a planned field may hold, or None when a plan may not change it."""
    write = planned_write(ref, operation)
    return write.fields.get(path) if write is not None and write.fields is not None else None


def check_changes(changes: Iterable[Change], where: str) -> None:
    """Each change allowed (check_change), and one change per object: two would race on one resourceVersion."""
    seen: set[ObjectRef] = set()
    for change in changes:
        check_change(change, where)
        if change.ref in seen:
            raise UserError(f"plan changes {change.ref} more than once", where=where)
        seen.add(change.ref)


def check_change(change: Change, where: str) -> None:
    """Refuse anything the allowed writes do not allow, before any request: name, kind, operation, field, value."""
    # metadata.name of Nodes and Queues: anything else (a `/`, a `..`) would address another object once the
    # URL is built and normalised, e.g. a Secret
    if dns_subdomain(change.ref.name) is not None:
        raise UserError(
            f"plan change names {change.ref.kind} {change.ref.name!r}, which is not a Kubernetes "
            f"object name ({SUBDOMAIN_RULE})",
            where=where,
        )
    if not change.fields:
        raise UserError(f"plan change {change.ref} changes no field", where=where)
    if len({f.path for f in change.fields}) != len(change.fields):
        raise UserError(f"plan change {change.ref} sets a field more than once", where=where)
    for f in change.fields:
        _check_field(change, f, where)
    if change.operation is Operation.CREATE:
        _check_manifest(change, where)
    check_text(change.reason, f"change {change.ref} reason", where)
    for rule in change.rules:
        if not RULE_ID.fullmatch(rule):
            raise UserError(
                f"plan change {change.ref} names rule {rule[:80]!r}, which is not a rule ID",
                where=where,
                hint="re-create the plan",
            )


def check_text(text: str, what: str, where: str) -> None:
    """Refuse free text no planner wrote: longer than TEXT_LIMIT, or not one line of printable characters
    (a line break or a control character would let a plan show text of its own making as the tool's)."""
    if len(text) > TEXT_LIMIT or not text.isprintable():
        raise UserError(
            f"plan {what} is not one line of printable text of at most {TEXT_LIMIT} characters",
            where=where,
            hint="re-create the plan",
        )


def _check_field(change: Change, f: FieldChange, where: str) -> None:
    values = writable_field(change.ref, change.operation, f.path)
    if values is None:
        raise UserError(
            f"plan change {change.operation.value} {change.ref} field {f.dotted()} is not one "
            f"kai-gitops may write ({writable_summary()})",
            where=where,
        )
    if values in SPEC_VALUES:  # kai-config / SchedulingShard: after of the field's type; before as it was
        if not values.allows(f.after):
            raise UserError(
                f"plan sets {change.ref} {f.dotted()} to {str(f.after)[:80]!r}; only {values.value} is allowed",
                where=where,
            )
        return
    if values is Values.TRUE and not values.allows(f.after):
        raise UserError(
            f"plan sets {change.ref} {f.dotted()} to {f.after!r}; only {values.value} is allowed", where=where
        )
    numeric = values is Values.NUMBER
    for side, value in (("before", f.before), ("after", f.after)):  # before: what the cluster held
        if numeric and not (values.allows(value) or (side == "before" and value is None)):
            raise UserError(
                f"plan change {change.ref} {f.dotted()} {side} must be a number, not {value!r}", where=where
            )
        if not numeric and value is not None and not isinstance(value, str):
            raise UserError(
                f"plan change {change.ref} {f.dotted()} {side} must be a string or null, not {value!r}", where=where
            )
    if values is Values.NAME and isinstance(f.after, str) and not values.allows(f.after):
        raise UserError(
            f"plan sets {change.ref} {f.dotted()} to {f.after[:80]!r}, which is not a Kubernetes "
            f"object name ({SUBDOMAIN_RULE})",
            where=where,
        )
    if values is Values.NAME and f.after == change.ref.name:
        raise UserError(
            f"plan makes {change.ref} its own {f.dotted()}: a queue cannot be its own parent",
            where=where,
            hint="re-create the plan",
        )


def _check_manifest(change: Change, where: str) -> None:
    """The created object is exactly the one the plan shows: its name, and a spec of the shown fields."""
    manifest: dict[str, Any] = change.manifest or {}
    if (
        (manifest.get("apiVersion"), manifest.get("kind"), (manifest.get("metadata") or {}).get("name"))
        != (change.ref.api_version, change.ref.kind, change.ref.name)
        or set(manifest) - {"apiVersion", "kind", "metadata", "spec"}
        or set(manifest.get("metadata") or {}) - {"name"}
    ):
        raise UserError(
            f"plan create {change.ref} has a manifest that is not that {change.ref.kind}'s name and spec", where=where
        )
    write = planned_write(change.ref, change.operation)
    assert write is not None and write.fields is not None  # its fields passed _check_field
    spec = dict(leaves(manifest.get("spec"), ("spec",)))
    if any(p not in write.fields for p in spec):
        raise UserError(f"plan create {change.ref} sets fields other than {write.shown}", where=where)
    shown = {f.path: f.after for f in change.fields}
    differs = sorted(
        p for p in spec.keys() | shown.keys() if p not in spec or p not in shown or not same_value(spec[p], shown[p])
    )
    if differs or any(f.before is not None for f in change.fields):
        path = FieldChange(differs[0], None, None).dotted() if differs else "before"
        raise UserError(f"plan create {change.ref}: its manifest and its fields disagree ({path})", where=where)
