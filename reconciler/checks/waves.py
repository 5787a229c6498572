"""Whether a self-heal run may apply a commit now, given the rollout's waves and what the clusters reported.

A pure function of (rollout config, cluster, the commit's lineage, the commit statuses, now): the acting room
(reconcile/rollout.py) reads the statuses from the Git host and writes the cluster's own; the fleet
simulation (tests/support/fleet.py, bench/fleet_waves.py) drives this same function.

The rule: cluster C (wave k) applies commit X only when every cluster of every earlier wave j has reported
success for X, or for a commit that descends from X, at least wave j's soak ago, and no other cluster's latest
report on X's lineage is a failure, nor its latest report on X itself (success on a descendant, the fix,
releases the fix, not X). A failure holds every cluster, the failing one's own wave included (it may retry:
its own report is not held against it). Releases: a newer commit (its lineage has no report yet, so the
rollout starts again from the first wave), a `kai-gitops/override` status in success on X itself, or the
`kai-gitops/override: "true"` label on the cluster's entry. The waves are those in force for X: its parent
commit's (reconcile/rollout.py), so that no commit releases itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from reconciler.model.rollout import OVERRIDE_CONTEXT, CommitStatus, RolloutConfig, show_soak

DecisionState = Literal["apply", "waiting", "held", "override", "unreadable", "no-rollout", "unknown-cluster"]
FAILED_STATES = frozenset({"failure", "error"})


@dataclass(frozen=True)
class WaveDecision:
    apply: bool
    state: DecisionState
    reason: str
    wave: int | None = None  # the cluster's wave, as people count (1 = first)
    wave_name: str | None = None
    held_by: str | None = None  # the failed cluster, when held

    def to_dict(self) -> dict[str, str | int | bool | None]:
        return {
            "apply": self.apply,
            "state": self.state,
            "reason": self.reason,
            "wave": self.wave,
            "waveName": self.wave_name,
            "heldBy": self.held_by,
        }


def unreadable(reason: str, what: str = "commit statuses") -> WaveDecision:
    """Fail closed: what the decision needs (the statuses, the rollout in force) could not be read, so nothing
    is applied."""
    return WaveDecision(False, "unreadable", f"{what} could not be read, nothing applied: {reason}")


@dataclass(frozen=True)
class Standing:
    """A cluster's standing on a commit's lineage: its newest report's state, and since when it has held (a
    run writes success every hour; the soak counts from the first success after the last failure)."""

    state: str
    since: float
    status: CommitStatus


def standings(
    statuses: Iterable[CommitStatus], lineage: frozenset[str], commit: str | None = None
) -> dict[str, Standing]:
    """Each cluster's standing on the commit or a descendant of it (a failure wins a tie: fail closed). A
    cluster whose latest report on `commit` itself is a failure stands failed on it, whatever it reported on a
    descendant since: the descendant may hold the fix, but the commit does not (a run on the commit applies the
    commit, not its fix), so success on the fix releases the fix, never the commit."""
    reports = sorted(
        (s for s in statuses if s.cluster is not None and s.sha in lineage and s.state != "pending"),
        key=lambda s: (s.at, s.state in FAILED_STATES),
    )
    standing: dict[str, Standing] = {}
    on_commit: dict[str, Standing] = {}
    for status in reports:
        cluster = status.cluster or ""
        state = "failure" if status.state in FAILED_STATES else "success"
        held = standing.get(cluster)
        since = held.since if held is not None and held.state == state else status.at
        standing[cluster] = Standing(state, since, status)
        if status.sha == commit:
            on_commit[cluster] = Standing(state, status.at, status)
    for cluster, own in on_commit.items():
        if own.state == "failure":
            standing[cluster] = own
    return standing


def decide(
    rollout: RolloutConfig | None,
    cluster: str,
    commit: str,
    lineage: frozenset[str],
    statuses: Sequence[CommitStatus],
    now: float,
) -> WaveDecision:
    """`lineage`: `commit` and the commits known to descend from it; `now` on the host's clock (seconds)."""
    if rollout is None:
        return WaveDecision(True, "no-rollout", "no rollout waves in kai-gitops.yaml")
    lineage = lineage | {commit}
    index = rollout.wave_of(cluster)
    if index is None:
        return WaveDecision(False, "unknown-cluster", f"cluster '{cluster}' is in no rollout wave")
    wave = rollout.waves[index]
    if cluster in rollout.overridden:
        return WaveDecision(
            True,
            "override",
            f'the cluster entry\'s label {OVERRIDE_CONTEXT}: "true" skips the waves',
            wave.number,
            wave.name,
        )
    if any(s.context == OVERRIDE_CONTEXT and s.state == "success" and s.sha == commit for s in statuses):
        return WaveDecision(
            True,
            "override",
            f"status {OVERRIDE_CONTEXT} in success on {commit[:12]} releases the rollout",
            wave.number,
            wave.name,
        )
    latest = standings(statuses, lineage, commit)
    failed = _first_failure(rollout, latest, cluster)
    if failed is not None:
        failed_wave, failed_cluster = failed
        return WaveDecision(
            False,
            "held",
            f"held by wave {failed_wave}: {failed_cluster} failed",
            wave.number,
            wave.name,
            held_by=failed_cluster,
        )
    for earlier in rollout.waves[:index]:
        for member in rollout.members[earlier.index]:
            report = latest.get(member)
            if report is None or report.state != "success":
                return WaveDecision(
                    False,
                    "waiting",
                    f"waiting for wave {earlier.number} ({earlier.name}): "
                    f"{member} has not reported success for {commit[:12]}",
                    wave.number,
                    wave.name,
                )
            if now - report.since < earlier.soak_s:
                left = show_soak(earlier.soak_s - (now - report.since))
                return WaveDecision(
                    False,
                    "waiting",
                    f"waiting for wave {earlier.number} ({earlier.name}) to soak: "
                    f"{member} succeeded {show_soak(now - report.since)} ago, {left} to go",
                    wave.number,
                    wave.name,
                )
    earlier_waves = "wave 1" if index == 1 else f"waves 1-{index}"
    why = "first wave" if index == 0 else f"{earlier_waves} succeeded and soaked"
    return WaveDecision(True, "apply", f"wave {wave.number} ({wave.name}): {why}", wave.number, wave.name)


def _first_failure(rollout: RolloutConfig, latest: dict[str, Standing], cluster: str) -> tuple[int, str] | None:
    """(wave number, cluster) of the earliest failed cluster other than `cluster`, by wave then name."""
    failed = sorted(
        (rollout.wave_of(name), name)
        for name, status in latest.items()
        if name != cluster and status.state == "failure" and rollout.wave_of(name) is not None
    )
    if not failed:
        return None
    index, name = failed[0]
    return (index or 0) + 1, name
