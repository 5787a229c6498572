"""What kai-gitops may write (docs/reconcile.md#allowed-writes, plus the guard rails' own):
which kinds, by which request, which fields.

The one declaration behind both checks of a write: every change of a plan is checked against it when the
plan is made or read (validate.py: a saved plan is input, never trusted), and every request against it
again just before it is sent (reconcile/allowed_writes.py).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from reconciler.core.names import dns_subdomain
from reconciler.core.refs import ObjectRef
from reconciler.core.resources import (
    CLUSTER_POLICY_REPORT,
    CONFIG,
    EVENT,
    LEASE,
    NODE,
    OPEN_CLUSTER_REPORT,
    OPEN_REPORT,
    POLICY_REPORT,
    QUEUE,
    SCHEDULING_SHARD,
    Resource,
)
from reconciler.model.kai_config import spec_field_types
from reconciler.model.live import SCHEDULE_LABEL
from reconciler.model.queues import FIELDS, RESOURCES
from reconciler.plans.plan import FieldPath, Operation

LABEL_PATH: FieldPath = ("metadata", "labels", SCHEDULE_LABEL)
# The label on the report objects the tool writes (publish/policyreport): the only objects it ever deletes.
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "kai-gitops"


class Values(Enum):
    """What a writable field may be set to."""

    NUMBER = "a number"
    NAME = "a name or null"  # a Queue's parent: another Queue, or none
    TRUE = '"true" or removal'  # the schedule label: set to exactly "true", or removed
    # kai-config and SchedulingShard spec fields: the type the operator's CRD gives the field, or removal
    # (the operator's default then applies)
    BOOLEAN = "true, false or removal"
    TEXT = "a string or removal"
    NUMBER_OR_REMOVAL = "a number or removal"
    STRUCTURE = "a mapping or list, or removal"

    def allows(self, value: Any) -> bool:
        if self is Values.NUMBER:
            return isinstance(value, int | float) and not isinstance(value, bool)
        if self is Values.NAME:  # a parent applied unchecked could name anything, up to the size of a request
            return value is None or (isinstance(value, str) and dns_subdomain(value) is None)
        if self is Values.TRUE:
            return value in (None, "true")
        return value is None or _TYPES[self](value)


@dataclass(frozen=True)
class Writable:
    """One request kai-gitops may send: `method` on `resource`'s collection (POST) or on one object."""

    resource: Resource
    method: str  # POST creates; PATCH is a merge patch; PUT replaces
    fields: Mapping[FieldPath, Values] | None  # None: an object of the tool's own, built whole, never planned
    shown: str = ""  # the fields, as messages name them
    names: frozenset[str] | None = None  # only these objects (the operator's singleton Config)
    # An object of the tool's own that carries MANAGED_BY_LABEL: written whole with it, deleted only by uid
    labelled: bool = False

    def fields_set(self, tree: Any) -> dict[FieldPath, Any] | None:
        """The writable fields `tree` sets (a merge patch, or a new object past its name), or None when it
        sets anything else, or a value its field may not hold."""
        fields = self.fields or {}
        found: dict[FieldPath, Any] = {}

        def walk(value: Any, prefix: FieldPath) -> bool:
            if prefix in fields:
                found[prefix] = value
                return fields[prefix].allows(value)
            if not isinstance(value, dict) or not any(p[: len(prefix)] == prefix for p in fields):
                return False
            return all(walk(v, (*prefix, str(k))) for k, v in value.items())

        return found if walk(tree, ()) else None


QUEUE_SPEC: Mapping[FieldPath, Values] = {
    ("spec", "parentQueue"): Values.NAME,
    **{("spec", "resources", res, key): Values.NUMBER for res in RESOURCES for key, _ in FIELDS},
}
_QUEUE_SHOWN = "spec.resources/spec.parentQueue"

_TYPES = {
    Values.BOOLEAN: lambda v: isinstance(v, bool),
    Values.TEXT: lambda v: isinstance(v, str),
    Values.NUMBER_OR_REMOVAL: lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    Values.STRUCTURE: lambda v: isinstance(v, dict | list),
}
_BY_TYPE = {
    "bool": Values.BOOLEAN,
    "text": Values.TEXT,
    "number": Values.NUMBER_OR_REMOVAL,
    "structure": Values.STRUCTURE,
}


class _ConfigSpec(Mapping[FieldPath, Values]):
    """Every field of kai-config's spec the pinned chart renders or the operator defaults (model/kai_config.py),
    made the first time a plan looks: rendering every chart column for it cost every command's start-up
    ~0.1 s (`python -X importtime`), and `check` never plans."""

    @functools.cached_property
    def _fields(self) -> dict[FieldPath, Values]:
        return {("spec", *path.split(".")): _BY_TYPE[kind] for path, kind in spec_field_types().items()}

    def __getitem__(self, path: FieldPath) -> Values:
        return self._fields[path]

    def __iter__(self) -> Iterator[FieldPath]:
        return iter(self._fields)

    def __len__(self) -> int:
        return len(self._fields)


CONFIG_SPEC: Mapping[FieldPath, Values] = _ConfigSpec()
# What the chart renders into SchedulingShard default from the values (KAI-D-003).
SHARD_SPEC: Mapping[FieldPath, Values] = {
    ("spec", "placementStrategy", "gpu"): Values.TEXT,
    ("spec", "placementStrategy", "cpu"): Values.TEXT,
    ("spec", "plugins"): Values.STRUCTURE,
    ("spec", "actions"): Values.STRUCTURE,
}

WRITES = (
    Writable(QUEUE, "POST", QUEUE_SPEC, _QUEUE_SHOWN),  # create a Queue: its name and these fields
    Writable(QUEUE, "PATCH", QUEUE_SPEC, _QUEUE_SHOWN),
    Writable(NODE, "PATCH", {LABEL_PATH: Values.TRUE}, f"the {SCHEDULE_LABEL} label"),
    Writable(
        CONFIG,
        "PATCH",
        CONFIG_SPEC,
        "spec fields the KAI chart renders or the operator defaults",
        frozenset({"kai-config"}),
    ),
    Writable(SCHEDULING_SHARD, "PATCH", SHARD_SPEC, "spec.placementStrategy/spec.plugins/spec.actions"),
    Writable(LEASE, "POST", None),  # the run's Lease (reconcile/lease.py), created and then renewed
    Writable(LEASE, "PUT", None),
    Writable(EVENT, "POST", None),  # an Event on each changed object (reconcile/events.py)
    # the run's PolicyReports (publish/policyreport): created, replaced in place, and deleted once stale
    *(
        Writable(kind, method, None, labelled=True)
        for kind in (CLUSTER_POLICY_REPORT, POLICY_REPORT, OPEN_CLUSTER_REPORT, OPEN_REPORT)
        for method in ("POST", "PUT", "DELETE")
    ),
)

# How a planned change is sent: a create is a POST of the whole object, an update a merge patch.
SENT_AS = {Operation.CREATE: "POST", Operation.UPDATE: "PATCH"}
PLANNED = tuple(dict.fromkeys(w.resource for w in WRITES if w.fields is not None))  # the kinds a plan may change


def planned_write(ref: ObjectRef, operation: Operation) -> Writable | None:
    """The write a planned change of `ref` would be, if kai-gitops may make it."""
    return next(
        (
            w
            for w in WRITES
            if w.fields is not None
            and w.method == SENT_AS[operation]
            and w.resource.describes(ref)
            and (w.names is None or ref.name in w.names)
        ),
        None,
    )


def writable_summary() -> str:
    """Every field a plan may change, for messages: "Queue spec.resources/spec.parentQueue; Node …"."""
    return "; ".join(dict.fromkeys(f"{w.resource.kind} {w.shown}" for w in WRITES if w.fields is not None))
