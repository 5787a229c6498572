"""NVCA's `kai-scheduler-queues` health check, predicted byte for byte (docs/policies.md#nvca-health-check)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from reconciler.core.jsonvalue import JSONLike
from reconciler.core.show import format_go_float as g
from reconciler.model.gates import SignedGates
from reconciler.model.live import LiveState
from reconciler.model.queues import RESOURCES, QueueSpec

PARENT = "default-parent-queue"
CHILD = "default-queue"
NOT_INSTALLED = (
    "KAI Scheduler is not installed but the KAIScheduler feature flag is enabled. Either install KAI Scheduler "
    "(see https://github.com/NVIDIA/KAI-Scheduler) or disable the KAIScheduler feature flag"
)
NOT_FOUND = (
    "Expected the two default queues default-parent-queue and default-queue, but either one or both were not "
    "found. See https://raw.githubusercontent.com/NVIDIA/KAI-Scheduler/refs/heads/main/docs/quickstart/"
    "default-queues.yaml for setting up right hierarchy"
)
HIERARCHY = (
    "Queue hierarchy misconfigured: 'default-parent-queue' must be a parent queue and 'default-queue' must be a "
    "child of 'default-parent-queue'. See https://raw.githubusercontent.com/NVIDIA/KAI-Scheduler/refs/heads/main/"
    "docs/quickstart/default-queues.yaml for setting up the correct hierarchy"
)
_LABEL = {"cpu": "CPU", "gpu": "GPU", "memory": "Memory"}


GATE = "KAIScheduler"


@dataclass(frozen=True)
class Verdict:
    healthy: bool
    errors: tuple[str, ...] = ()
    evaluated: bool = True  # False: the KAIScheduler gate is off, so NVCA does not run this check at all

    @property
    def status(self) -> str:
        if not self.evaluated:
            return "not-evaluated"
        return "healthy" if self.healthy else "unhealthy"

    def to_dict(self) -> dict[str, JSONLike]:
        return {"status": self.status, "errors": list(self.errors)}


def predict(
    queues: Mapping[str, QueueSpec],
    *,
    kind_served: bool = True,
    list_error: str | None = None,
    gate_enabled: bool | None = None,
) -> Verdict:
    """`gate_enabled` None means unknown: predict as if on, which is when the verdict matters."""
    if gate_enabled is False:
        return Verdict(True, evaluated=False)
    if not kind_served:
        return Verdict(False, (NOT_INSTALLED,))
    if list_error is not None:
        return Verdict(False, (f"Failed to list KAI Scheduler queues: {list_error}",))
    kept = [queues[name] for name in sorted(queues) if name in (PARENT, CHILD)]
    if len(kept) != 2:
        return Verdict(False, (NOT_FOUND,))
    child = False
    for queue in kept:
        if queue.parent and queue.name != CHILD:
            child = False
            break
        if queue.parent and queue.name == CHILD:
            child = True
        violation = _first_violation(queue)
        if violation:
            return Verdict(False, (violation,))
    if not child:
        return Verdict(False, (HIERARCHY,))
    return Verdict(True)


def _first_violation(queue: QueueSpec) -> str | None:
    for resource in RESOURCES:
        t = queue.triple(resource)
        if not t.is_unlimited():
            return (
                f"{_LABEL[resource]} resource violation for queue {queue.name}: expected limit=-1, quota=-1, "
                f"overQuotaWeight=1, got limit={g(t.limit)}, quota={g(t.quota)}, "
                f"overQuotaWeight={g(t.over_quota_weight)}"
            )
    return None


def gate_enabled(live: LiveState, desired_effective: list[str] | None) -> bool | None:
    """Whether the NVCA that is running has KAIScheduler on: the rolled-out status first, then what is
    asked of it (overrides replace spec), then the rendered ConfigMap, then Git."""
    backend = live.backends[0] if len(live.backends) == 1 else None
    candidates = [backend.status_gates, backend.override_gates, backend.spec_gates] if backend else []
    candidates += [live.dto_capabilities, desired_effective]
    for items in candidates:
        if items is not None:
            return SignedGates.of(items).is_enabled(GATE)
    return None
