"""What an apply did, change by change: the input of the apply's text, its JSON, the audit log and metrics."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from reconciler.plans.plan import Change


class WriteResult(StrEnum):
    """What became of one planned write: the audit line's `result`."""

    STARTED = "started"  # the intent, audited before the request leaves
    APPLIED = "applied"
    FAILED = "failed"
    NOT_ATTEMPTED = "not-attempted"  # an earlier failure, an interrupt or a lost Lease stopped the run
    ALREADY_APPLIED = "already-applied"  # a re-run found the object already as planned


@dataclass
class ChangeResult:
    change: Change
    result: WriteResult
    error: str | None = None
    resource_version: str | None = None
    previous_managers: tuple[str, ...] = ()
    uid: str | None = None  # of the written object: its Event's regarding.uid

    def to_dict(self) -> dict[str, Any]:
        return {
            "object": self.change.ref.to_dict(),
            "operation": self.change.operation.value,
            "result": self.result.value,
            "error": self.error,
            "resourceVersion": self.resource_version,
            "previousManagers": list(self.previous_managers),
        }


@dataclass
class ApplyResult:
    """What an apply did, change by change: the input of the text, the JSON `apply` key and metrics."""

    plan_id: str
    results: list[ChangeResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # e.g. an Event that could not be created

    @property
    def ok(self) -> bool:
        return all(r.result in (WriteResult.APPLIED, WriteResult.ALREADY_APPLIED) for r in self.results)

    def count(self, result: WriteResult) -> int:
        return sum(1 for r in self.results if r.result == result)

    def counts(self) -> dict[str, int]:
        return {
            "planned": len(self.results),
            "applied": self.count(WriteResult.APPLIED),
            "failed": self.count(WriteResult.FAILED),
            "skipped": self.count(WriteResult.NOT_ATTEMPTED) + self.count(WriteResult.ALREADY_APPLIED),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "planId": self.plan_id,
            "ok": self.ok,
            **self.counts(),
            "changes": [r.to_dict() for r in self.results],
            "warnings": self.warnings,
        }
