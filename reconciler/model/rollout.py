"""The `rollout:` block of kai-gitops.yaml (waves of clusters, each with a soak) and the commit statuses the
clusters report on the Git host, as typed objects: what the wave decision (checks/waves.py) reads."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

APPLY_CONTEXT_PREFIX = "kai-gitops/apply/"  # + cluster name: one cluster's report on one commit
OVERRIDE_CONTEXT = "kai-gitops/override"  # a person's release of a halted rollout for one commit
OVERRIDE_LABEL = "kai-gitops/override"  # on a cluster entry, value "true": this cluster ignores the waves
UNLISTED_WAVE = "unlisted"  # the last wave: the clusters no wave names

StatusState = Literal["success", "failure", "pending", "error"]
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


def apply_context(cluster: str) -> str:
    return APPLY_CONTEXT_PREFIX + cluster


def parse_soak(text: str) -> float:
    """`1h30m` -> 5400.0 seconds; the schema's pattern has been checked, so only the empty match is refused."""
    found = _DURATION.match(text)
    if not text or found is None:
        raise ValueError(f"{text!r} is not a duration like 1h, 30m or 1h30m")
    hours, minutes, seconds = (int(part or 0) for part in found.groups())
    return float(hours * 3600 + minutes * 60 + seconds)


def show_soak(seconds: float) -> str:
    whole = int(seconds)
    parts = [(whole // 3600, "h"), (whole % 3600 // 60, "m"), (whole % 60, "s")]
    return "".join(f"{n}{unit}" for n, unit in parts if n) or "0s"


@dataclass(frozen=True)
class Wave:
    name: str
    clusters: tuple[str, ...] = ()  # by name
    selector: tuple[tuple[str, str], ...] = ()  # by the cluster entry's labels, every pair
    soak_s: float = 0.0
    index: int = 0  # position in rollout.waves

    @property
    def number(self) -> int:
        """As people count waves: the first is wave 1."""
        return self.index + 1

    def names(self, cluster: str, labels: Mapping[str, str]) -> bool:
        if self.clusters:
            return cluster in self.clusters
        return bool(self.selector) and all(labels.get(key) == value for key, value in self.selector)


@dataclass(frozen=True)
class RolloutConfig:
    """Ordered waves; `members[i]` is the cluster names of wave i (the last, unlisted wave included when a
    cluster is in none), resolved once from the cluster entries when the file is read."""

    waves: tuple[Wave, ...]
    members: tuple[tuple[str, ...], ...] = ()
    overridden: frozenset[str] = field(default_factory=frozenset)  # clusters labelled kai-gitops/override

    def wave_of(self, cluster: str) -> int | None:
        return next((i for i, names in enumerate(self.members) if cluster in names), None)

    def joining(self, cluster: str) -> RolloutConfig:
        """This rollout with `cluster` in its last, unlisted wave: a cluster that the rollout in force (the
        parent commit's) does not know yet goes after every named wave."""
        if self.wave_of(cluster) is not None:
            return self
        if self.waves and self.waves[-1].name == UNLISTED_WAVE:
            last = self.waves[-1]
            return replace(
                self,
                waves=(*self.waves[:-1], replace(last, clusters=(*last.clusters, cluster))),
                members=(*self.members[:-1], (*self.members[-1], cluster)),
            )
        return replace(
            self,
            waves=(*self.waves, Wave(UNLISTED_WAVE, (cluster,), index=len(self.waves))),
            members=(*self.members, (cluster,)),
        )


@dataclass(frozen=True)
class CommitStatus:
    """One status on a commit, as both hosts report it (GitLab's `failed` and `canceled` read as failure)."""

    sha: str
    context: str
    state: StatusState
    at: float  # when it was written, seconds since the epoch (the host's clock)
    description: str = ""

    @property
    def cluster(self) -> str | None:
        return (
            self.context.removeprefix(APPLY_CONTEXT_PREFIX) if self.context.startswith(APPLY_CONTEXT_PREFIX) else None
        )
