"""What an apply did, change by change: the input of the apply's text, its JSON, the audit log and metrics."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from reconciler.plans.plan import Change


@dataclass
class ChangeResult:
    change: Change
    result: str                  # applied | failed | not-attempted | already-applied; started: the intent line
    error: str | None = None
    resource_version: str | None = None
    previous_managers: tuple[str, ...] = ()
    uid: str | None = None       # of the written object: its Event's regarding.uid

    def to_dict(self) -> dict[str, Any]:
        return {"object": self.change.ref.to_dict(), "operation": self.change.operation.value,
                "result": self.result, "error": self.error, "resourceVersion": self.resource_version,
                "previousManagers": list(self.previous_managers)}


@dataclass
class ApplyResult:
    """What an apply did, change by change: the input of the text, the JSON `apply` key and metrics."""

    plan_id: str
    results: list[ChangeResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)   # e.g. an Event that could not be created

    @property
    def ok(self) -> bool:
        return all(r.result in ("applied", "already-applied") for r in self.results)

    def count(self, result: str) -> int:
        return sum(1 for r in self.results if r.result == result)

    def counts(self) -> dict[str, int]:
        return {"planned": len(self.results), "applied": self.count("applied"), "failed": self.count("failed"),
                "skipped": self.count("not-attempted") + self.count("already-applied")}

    def to_dict(self) -> dict[str, Any]:
        return {"planId": self.plan_id, "ok": self.ok, **self.counts(),
                "changes": [r.to_dict() for r in self.results], "warnings": self.warnings}
