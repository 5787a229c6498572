"""A planned field's value, the same way at plan time and at apply time: NVCA's numbers, absent as None.

The planner reads the live value of each field it changes (its *before*), and the applier reads it again
from the object as stored now: both go through `current_value`/`queue_field` and compare with
`same_value`, so a plan is stale exactly when a planned field no longer holds what was planned.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from reconciler.core.jsonvalue import JSONValue, mapping_at
from reconciler.core.refs import ObjectRef
from reconciler.core.resources import CONFIG, QUEUE, SCHEDULING_SHARD
from reconciler.model.live import SCHEDULE_LABEL
from reconciler.model.queues import FIELDS, RESOURCES, QueueSpec, queue_spec_from_values, same_number
from reconciler.plans.plan import FieldChange, FieldPath
from reconciler.plans.writable import LABEL_PATH

FieldValue = str | int | float | None  # a planned field's value as NVCA reads it (None: absent)
KAI_SPEC_KINDS = (CONFIG.kind, SCHEDULING_SHARD.kind)  # their planned fields are read as stored


def queue_field(spec: QueueSpec, path: FieldPath) -> FieldValue:
    """A planned Queue field as NVCA reads it: numbers as float64 with absent = 0, parentQueue or None."""
    if path == ("spec", "parentQueue"):
        return spec.parent
    if len(path) == 4 and path[:2] == ("spec", "resources") and path[2] in RESOURCES:
        if spec.resources is None:
            return None
        attr = dict(FIELDS).get(path[3])
        return None if attr is None else _number(getattr(spec.triple(path[2]), attr))
    raise ValueError(f"not a planned Queue field: {path}")


def current_value(ref: ObjectRef, obj: Mapping[str, JSONValue], path: FieldPath) -> JSONValue:
    """The value of a planned field in a freshly read object."""
    if ref.kind in KAI_SPEC_KINDS:
        return stored_value(obj, path)
    if ref.kind == QUEUE.kind:
        return queue_field(queue_spec_from_values(obj), path)
    if path == LABEL_PATH:
        value = mapping_at(mapping_at(obj, "metadata"), "labels").get(SCHEDULE_LABEL)
        return None if value is None else str(value)
    raise ValueError(f"not a planned field: {ref} {path}")


def stored_value(obj: Mapping[str, JSONValue], path: FieldPath) -> JSONValue:
    """The value at `path` as the object stores it (None: absent)."""
    node: JSONValue = dict(obj)
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def same_value(a: object, b: object) -> bool:
    if (
        isinstance(a, int | float)
        and isinstance(b, int | float)
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    ):
        return same_number(float(a), float(b))
    return bool(a == b)


def _number(value: float) -> int | float:
    return int(value) if value == value and float(value).is_integer() else value


def queue_update_fields(want: Mapping[str, JSONValue], live: QueueSpec) -> tuple[FieldChange, ...]:
    """Every field of a Queue spec patch (spec.resources leaves, spec.parentQueue) whose live value differs."""
    changes: list[FieldChange] = []
    for path, after in leaves(mapping_at(want, "spec"), ("spec",)):
        before = queue_field(live, path)
        if not same_value(before, after):
            changes.append(FieldChange(path, before, after))
    return tuple(changes)


def leaves(value: object, prefix: FieldPath) -> Iterator[tuple[FieldPath, object]]:
    if isinstance(value, dict):
        for key in sorted(value):
            yield from leaves(value[key], (*prefix, str(key)))
    else:
        yield prefix, value
