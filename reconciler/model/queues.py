"""KAI Queue specs with the numeric semantics NVCA applies (float64, absent = 0, -1 = unlimited)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from reconciler.core.jsonvalue import JSONValue, as_object, mapping_at
from reconciler.core.quantity import parse_quantity
from reconciler.model.values import as_number

RESOURCES = ("cpu", "gpu", "memory")
FIELDS = (("quota", "quota"), ("limit", "limit"), ("overQuotaWeight", "over_quota_weight"))


def field_path(key: str) -> tuple[str, ...]:
    """A queue field as drift names it ("parent", "resources", "cpu.quota") as its path in the Queue object."""
    if key == "parent":
        return ("spec", "parentQueue")
    return ("spec", "resources", *key.split(".")) if key != "resources" else ("spec", "resources")


@dataclass(frozen=True)
class Triple:
    quota: float
    limit: float
    over_quota_weight: float

    def is_unlimited(self) -> bool:
        return (self.limit, self.quota, self.over_quota_weight) == (-1.0, -1.0, 1.0)

    def to_dict(self) -> dict[str, float]:
        return {"quota": self.quota, "limit": self.limit, "overQuotaWeight": self.over_quota_weight}


UNLIMITED = Triple(-1.0, -1.0, 1.0)


def same_number(a: float, b: float) -> bool:
    return a == b or (a != a and b != b)


def triple_from_values(values: JSONValue) -> Triple:
    given = as_object(values)
    return Triple(as_number(given.get("quota")), as_number(given.get("limit")), as_number(given.get("overQuotaWeight")))


@dataclass(frozen=True)
class QueueSpec:
    name: str
    parent: str | None
    resources: dict[str, Triple] | None  # None: the object has no spec.resources (NVCA crashes on it)

    def triple(self, resource: str) -> Triple:
        if self.resources is None:
            return Triple(0.0, 0.0, 0.0)
        return self.resources[resource]


def queue_spec_from_values(obj: Mapping[str, JSONValue]) -> QueueSpec:
    """A Queue object (live or from a manifest) reduced to what NVCA and our policies read."""
    spec = mapping_at(obj, "spec")
    raw = spec.get("resources")
    resources = {res: triple_from_values(raw.get(res)) for res in RESOURCES} if isinstance(raw, dict) else None
    parent = spec.get("parentQueue") or None
    return QueueSpec(str(mapping_at(obj, "metadata").get("name", "")), _text(parent), resources)


def _text(value: JSONValue) -> str | None:
    """A queue name: Git's manifests are checked to hold one; a hand-edited snapshot is told it must."""
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"spec.parentQueue is a {type(value).__name__}, not a queue name")


# How KAI's scheduler scales a Queue's numbers to compare them with what pods request (its proportion
# plugin): CPU in millicores, memory in MB of 10^6 bytes (its constant `mebibytes = 1000 * 1000`), GPUs in
# devices, fractions included. status.allocated is a ResourceList of quantities (cpu cores, memory bytes,
# nvidia.com/gpu devices), written by KAI's queue controller.
SPEC_UNIT = {"cpu": Decimal("0.001"), "gpu": Decimal(1), "memory": Decimal(10**6)}
GPU_SUFFIX = "/gpu"  # the queue controller counts any resource named */gpu as GPUs


@dataclass(frozen=True)
class Allocation:
    """A live Queue's status in its spec's units: what its running work (and its children's) holds now."""

    allocated: dict[str, float]
    non_preemptible: dict[str, float]

    def to_dict(self) -> dict[str, dict[str, float]]:
        return {"allocated": self.allocated, "allocatedNonPreemptible": self.non_preemptible}


def allocation_from_status(obj: Mapping[str, JSONValue]) -> Allocation | None:
    """None when KAI has not written status.allocated (no queue controller yet, or a Queue just created)."""
    status = as_object(obj.get("status"))
    if not isinstance(status.get("allocated"), dict):
        return None
    return Allocation(
        _in_spec_units(status.get("allocated"), "status.allocated"),
        _in_spec_units(status.get("allocatedNonPreemptible"), "status.allocatedNonPreemptible"),
    )


def _in_spec_units(raw: JSONValue, where: str) -> dict[str, float]:
    totals = dict.fromkeys(RESOURCES, Decimal(0))
    for name, value in as_object(raw).items():
        resource = "gpu" if name.endswith(GPU_SUFFIX) else name
        if resource not in totals or name == "gpu":  # a bare `gpu` is no Kubernetes resource name
            continue
        try:
            totals[resource] += parse_quantity(value)
        except ValueError as exc:
            raise ValueError(f"{where}.{name}: {exc}") from None
    # Rounded as KAI's queue metrics round them: 4 GiB is 4294.9673 MB, not 4294.967296.
    return {res: round(float(amount / SPEC_UNIT[res]), 4) for res, amount in totals.items()}


@dataclass(frozen=True)
class SnapshotQueues:
    """A cluster's Queues as a saved snapshot holds them, for the PR check (`check --live-snapshot`): their specs
    and allocations only, when the snapshot was taken and of which cluster (None when it does not say)."""

    source: str
    taken_at: datetime | None
    queues: dict[str, QueueSpec]
    allocations: dict[str, Allocation]
    cluster_uid: str | None = None  # the kube-system namespace's UID it records: which cluster it is of
    path: str = ""
