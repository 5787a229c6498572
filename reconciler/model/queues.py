"""KAI Queue specs with the numeric semantics NVCA applies (float64, absent = 0, -1 = unlimited)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from reconciler.core.jsonvalue import JSONValue, as_object, mapping_at
from reconciler.model.values import as_number

RESOURCES = ("cpu", "gpu", "memory")
FIELDS = (("quota", "quota"), ("limit", "limit"), ("overQuotaWeight", "over_quota_weight"))


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
    return Triple(as_number(given.get("quota")), as_number(given.get("limit")),
                  as_number(given.get("overQuotaWeight")))


@dataclass(frozen=True)
class QueueSpec:
    name: str
    parent: str | None
    resources: dict[str, Triple] | None   # None: the object has no spec.resources (NVCA crashes on it)

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
