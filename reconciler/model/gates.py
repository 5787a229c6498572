"""NVCA feature-gate lists: signed items, disabled wins, and the compute-plane stack's defaulting."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

# Appended by the stack unless the user lists the gate or its negation (docs/policies.md#feature-gates), in this order.
STACK_DEFAULT_GATES = (
    "DynamicGPUDiscovery",
    "InfraResourceOverhead",
    "EnforceHelmFunctionResourceLimits",
    "EnforceContainerFunctionResourceLimits",
    "EnforceHelmTaskResourceLimits",
    "EnforceContainerTaskResourceLimits",
)

# Gates the stack turns on because an enabled add-on needs them, by add-on (the Rego's lib/gates.rego addon_gates).
ADDON_GATES = {"kaiScheduler": "KAIScheduler", "dynamoOperator": "DynamoOperatorSupport"}


def gate_name(item: str) -> str:
    """NVCA strips one sign: `--X` is the disabled gate named `-X` (unknown), not a disabled X."""
    item = item.strip()
    return item[1:] if item[:1] in ("+", "-") else item


def split_gate_string(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


@dataclass(frozen=True)
class SignedGates:
    enabled: frozenset[str]
    disabled: frozenset[str]

    @classmethod
    def of(cls, items: Iterable[str]) -> SignedGates:
        on: set[str] = set()
        off: set[str] = set()
        for raw in items:
            item = raw.strip()
            (off if item.startswith("-") else on).add(gate_name(item))
        return cls(frozenset(on - off), frozenset(off))

    def is_enabled(self, name: str) -> bool:
        return name in self.enabled


def stack_effective_gates(
    user: list[str], *, kai_addon: bool, dynamo_addon: bool, observability_profile: str | None
) -> list[str]:
    """The list the nvcf-compute-plane stack renders into the cluster DTO's `capabilities`."""
    defaults = list(STACK_DEFAULT_GATES)
    if (observability_profile or "compute") in ("compute", "all"):
        defaults.append("BYOObservability")
    if kai_addon:
        defaults.append("KAIScheduler")
    if dynamo_addon:
        defaults.append("DynamoOperatorSupport")
    mentioned = {gate_name(item) for item in user}
    return list(user) + [gate for gate in defaults if gate not in mentioned]
