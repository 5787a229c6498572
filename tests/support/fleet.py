"""A simulated fleet under rollout waves: N clusters, each a self-heal CronJob running hourly, a scripted clock.

What is real: kai-gitops.yaml parsed by the product (`parse_repo_config`), each run's gate and report through
the acting room (`reconcile/rollout.py`: the status read failing closed, the wave decision of
`checks/waves.py`, the post-apply health over the re-read report, the status write), and each cluster's
health after an apply predicted by NVCA's own `kai-scheduler-queues` check (`checks/nvca.py`) over the
Queues of the commit it applied. What is simulated: the clusters' live state (the commit each one applied,
in-process), and the Git host's statuses, an in-process board (`StatusBoard`) that
tests/fleet/test_fleet_waves.py proves answers as the GitHub stand-in does through the product's GitHub client
(held to GitHub's published description), 5xx included.

Races: `duplicate_runs` runs each CronJob twice at once (both read before either writes);
`write_delay_s` makes every status land that much later (the host stamps it when it lands); `read_5xx` and
`write_5xx` are the shares of status reads and writes that fail after the client's retries.
"""

from __future__ import annotations

import heapq
import logging
import random
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from reconciler.checks.nvca import Verdict, predict
from reconciler.checks.waves import WaveDecision
from reconciler.core.errors import UserError
from reconciler.model.config import RepoConfig
from reconciler.model.queues import QueueSpec, queue_spec_from_values
from reconciler.model.rollout import CommitStatus, StatusState
from reconciler.plans.applied import ApplyResult
from reconciler.plans.plan import Plan
from reconciler.reconcile import rollout
from reconciler.reconcile.outcome import ReconcileOutcome
from reconciler.reconcile.settings import RolloutSettings
from reconciler.report.report import ClusterReport, GitInfo, Report
from reconciler.sources.repoconfig import parse_repo_config

HOUR = 3600.0
BASE, GOOD, BAD, FIX = "b" * 40, "6" * 40, "d" * 40, "f" * 40


def _queue(name: str, parent: str | None, gpu_limit: float = -1, gpu_quota: float = -1) -> dict[str, Any]:
    unlimited = {"quota": -1, "limit": -1, "overQuotaWeight": 1}
    spec: dict[str, Any] = {
        "resources": {
            "cpu": unlimited,
            "memory": unlimited,
            "gpu": {"quota": gpu_quota, "limit": gpu_limit, "overQuotaWeight": 1},
        }
    }
    if parent:
        spec["parentQueue"] = parent
    return {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": name}, "spec": spec}


def _queues(*objects: dict[str, Any]) -> dict[str, QueueSpec]:
    return {spec.name: spec for spec in map(queue_spec_from_values, objects)}


# What each commit's Queues are. The good change gives team-a 16 GPUs; the bad one caps default-queue's GPUs,
# which NVCA's kai-scheduler-queues check reads as a violation (it wants -1/-1/1 on both default queues).
COMMIT_QUEUES = {
    BASE: _queues(
        _queue("default-parent-queue", None),
        _queue("default-queue", "default-parent-queue"),
        _queue("team-a", "default-parent-queue", 8, 8),
    ),
    GOOD: _queues(
        _queue("default-parent-queue", None),
        _queue("default-queue", "default-parent-queue"),
        _queue("team-a", "default-parent-queue", 16, 16),
    ),
    BAD: _queues(
        _queue("default-parent-queue", None),
        _queue("default-queue", "default-parent-queue", 8, 8),
        _queue("team-a", "default-parent-queue", 8, 8),
    ),
}
COMMIT_QUEUES[FIX] = COMMIT_QUEUES[BASE]  # the revert of the bad change


def verdict(commit: str) -> Verdict:
    return predict(COMMIT_QUEUES[commit])


class StatusBoard:
    """The Git host's commit statuses, in process: stamped in whole seconds of the scripted clock when they land,
    listed newest first; faults as the product's client raises them once its retries are spent."""

    def __init__(
        self,
        clock: Callable[[], float],
        *,
        rng: random.Random | None = None,
        read_5xx: float = 0.0,
        write_5xx: float = 0.0,
        write_delay_s: float = 0.0,
    ) -> None:
        self.clock, self.rng = clock, rng or random.Random(0)
        self.read_5xx, self.write_5xx, self.write_delay_s = read_5xx, write_5xx, write_delay_s
        self.statuses: dict[str, list[CommitStatus]] = {}
        self.in_flight: list[tuple[float, int, CommitStatus]] = []  # (lands at, order, status)
        self.reads = self.writes = self.failed_reads = self.failed_writes = 0
        self._order = 0

    def land(self) -> None:
        """Statuses whose delay is over land now, stamped with the time they land."""
        now = self.clock()
        while self.in_flight and self.in_flight[0][0] <= now:
            at, _, status = heapq.heappop(self.in_flight)
            self._store(CommitStatus(status.sha, status.context, status.state, float(int(at)), status.description))

    def commit_statuses(self, sha: str) -> list[CommitStatus]:
        self.land()
        self.reads += 1
        if self.read_5xx and self.rng.random() < self.read_5xx:
            self.failed_reads += 1
            raise UserError("GitHub answered HTTP 503 after 3 retries (reading the statuses)")
        return list(self.statuses.get(sha, ()))

    def set_commit_status(self, sha: str, context: str, state: str, description: str) -> CommitStatus:
        self.writes += 1
        if self.write_5xx and self.rng.random() < self.write_5xx:
            self.failed_writes += 1
            raise UserError("GitHub answered HTTP 502 after 3 retries (writing a status)")
        typed: StatusState = state  # type: ignore[assignment]
        status = CommitStatus(sha, context, typed, float(int(self.clock())), description[:140])  # the client cuts
        if self.write_delay_s:
            self._order += 1
            heapq.heappush(self.in_flight, (self.clock() + self.write_delay_s, self._order, status))
            return status
        self._store(status)
        return status

    def _store(self, status: CommitStatus) -> None:
        self.statuses.setdefault(status.sha, []).insert(0, status)

    def first_failure_at(self, sha: str) -> float | None:
        return min((s.at for s in self.statuses.get(sha, ()) if s.state == "failure"), default=None)


@dataclass
class Cluster:
    name: str
    wave: int  # index of its wave
    minute: float  # its CronJob's offset in the hour, seconds
    applied: str = BASE  # the commit its live state is at
    reported: bool = True  # its report on `applied` was written (a failed write: the next run writes it)
    last: WaveDecision | None = None


@dataclass(frozen=True)
class Apply:
    cluster: str
    wave: int
    commit: str
    at: float
    healthy: bool


@dataclass(frozen=True)
class Scenario:
    name: str
    merges: tuple[tuple[float, str], ...]  # (time after start, the commit the branch head becomes)
    hours: float = 12.0
    duplicate_runs: bool = False
    read_5xx: float = 0.0
    write_5xx: float = 0.0
    write_delay_s: float = 0.0


def fleet_config(size: int) -> RepoConfig:
    """kai-gitops.yaml of `size` clusters in four waves: 1 % (at least one), to 10 %, to 40 %, the rest (unlisted)."""
    names = [f"gpu-{i:04d}" for i in range(size)]
    cuts = [max(1, size // 100), max(2, size // 10), max(3, size * 4 // 10)]
    entries = "".join(
        f"  - {{name: {n}, mode: standalone, kaiChartVersion: v0.16.7, kaiValuesFile: k.yaml}}\n" for n in names
    )
    waves = (
        f"    - {{name: canary, clusters: [{', '.join(names[: cuts[0]])}], soak: 1h}}\n"
        f"    - {{name: early, clusters: [{', '.join(names[cuts[0] : cuts[1]])}], soak: 1h}}\n"
        f"    - {{name: main, clusters: [{', '.join(names[cuts[1] : cuts[2]])}], soak: 1h}}\n"
    )
    text = f"apiVersion: kai-gitops/v1\nclusters:\n{entries}rollout:\n  waves:\n{waves}"
    return parse_repo_config(text.encode())


@dataclass
class Result:
    scenario: Scenario
    clusters: list[Cluster]
    applies: list[Apply]
    board: StatusBoard
    config: RepoConfig
    order_violations: list[str] = field(default_factory=list)

    def table(self) -> dict[str, Any]:
        """The figures of the docs' table, for the bad change (the first merge) and the whole run."""
        first = self.scenario.merges[0][1]
        applied = {a.cluster for a in self.applies if a.commit == first}
        waves = {a.wave for a in self.applies if a.commit == first}
        failed_at = self.board.first_failure_at(first)
        merged_at = self.scenario.merges[0][0]
        held = [c for c in self.clusters if c.last is not None and c.last.state == "held"]
        per_wave = {}
        for index, names in enumerate(self.config.rollout.members if self.config.rollout else ()):
            times = [a.at for a in self.applies if a.commit == first and a.wave == index]
            per_wave[self.config.rollout.waves[index].name if self.config.rollout else str(index)] = {
                "clusters": len(names),
                "applied": len({a.cluster for a in self.applies if a.commit == first and a.wave == index}),
                "first_apply_h": round((min(times) - merged_at) / HOUR, 2) if times else None,
                "last_apply_h": round((max(times) - merged_at) / HOUR, 2) if times else None,
            }
        final = self.scenario.merges[-1][1]
        return {
            "scenario": self.scenario.name,
            "clusters": len(self.clusters),
            "applied": len(applied),
            "applied_in_waves": sorted(w + 1 for w in waves),
            "held": len(held),
            "held_reason": held[0].last.reason if held and held[0].last else None,
            "waiting": sum(1 for c in self.clusters if c.last is not None and c.last.state == "waiting"),
            "unreadable": sum(1 for c in self.clusters if c.last is not None and c.last.state == "unreadable"),
            "order_violations": len(self.order_violations),
            "time_to_halt_min": None if failed_at is None else round((failed_at - merged_at) / 60, 1),
            "at_final_commit": sum(1 for c in self.clusters if c.applied == final),
            "runs": self.runs,
            "status_reads": self.board.reads,
            "status_writes": self.board.writes,
            "failed_reads": self.board.failed_reads,
            "failed_writes": self.board.failed_writes,
            "per_wave": per_wave,
        }

    runs: int = 0


@contextmanager
def _quiet() -> Iterator[None]:
    """A failed status write is a warning per run: thousands of them in a fleet, said once in the table."""
    logger = logging.getLogger("kai_gitops.rollout")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def simulate(
    size: int, scenario: Scenario, *, seed: int = 7, config: RepoConfig | None = None, naive: bool = False
) -> Result:
    """`naive`: self-heal as it is without waves, every cluster applying the branch head at its next run."""
    config = config or fleet_config(size)
    assert config.rollout is not None
    rng = random.Random(seed)
    now = [0.0]
    board = StatusBoard(
        lambda: now[0],
        rng=random.Random(seed + 1),
        read_5xx=scenario.read_5xx,
        write_5xx=scenario.write_5xx,
        write_delay_s=scenario.write_delay_s,
    )
    clusters = [Cluster(c.name, config.rollout.wave_of(c.name) or 0, rng.uniform(0, HOUR)) for c in config.clusters]
    result = Result(scenario, clusters, [], board, config)
    settings = RolloutSettings(
        board=lambda _report: board,
        descendants=lambda _commit: (),
        clock=lambda: now[0],
        rollout_before=lambda _commit: None,
    )  # one kai-gitops.yaml throughout
    events: list[tuple[float, int, int]] = []  # (time, tie-break, cluster index)
    hours = int(scenario.hours) + 1
    for index, cluster in enumerate(clusters):
        for hour in range(hours):
            heapq.heappush(events, (hour * HOUR + cluster.minute, rng.randrange(1 << 30), index))
    merges = list(scenario.merges)
    head = BASE
    with _quiet():
        while events:
            at, _, index = heapq.heappop(events)
            if at > scenario.hours * HOUR:
                break
            now[0] = at
            while merges and merges[0][0] <= at:
                head = merges.pop(0)[1]
            cluster = clusters[index]
            runs = 2 if scenario.duplicate_runs else 1
            gates = [_gate(cluster, head, config, settings, naive) for _ in range(runs)]  # both read, then write
            for gate in gates:
                _run(cluster, head, gate, config, result, at)
    board.land()
    result.order_violations = check_order(result)
    return result


def _gate(
    cluster: Cluster, head: str, config: RepoConfig, settings: RolloutSettings, naive: bool = False
) -> rollout.Gate | None:
    if cluster.applied == head and cluster.reported:
        return None  # at the branch head, its report written: a run re-applies nothing and writes nothing
    if naive:
        return rollout.Gate(WaveDecision(True, "no-rollout", "no waves"), cluster.name, head)
    report = Report("reconcile", [ClusterReport(cluster.name, GitInfo("fleet", "main", head))], config=config)
    return rollout.gate(report, settings)


def _run(cluster: Cluster, head: str, gate: rollout.Gate | None, config: RepoConfig, result: Result, at: float) -> None:
    result.runs += 1
    if gate is None:
        return
    cluster.last = gate.decision
    if not gate.decision.apply:
        return
    if cluster.applied != head:
        cluster.applied = head
        result.applies.append(Apply(cluster.name, cluster.wave, head, at, verdict(head).healthy))
    healthy = verdict(head)
    git = GitInfo("fleet", "main", head)
    before = Report("reconcile", [ClusterReport(cluster.name, git)], config=config)
    after = Report("reconcile", [ClusterReport(cluster.name, git, nvca=healthy)], config=config)
    failed_writes = result.board.failed_writes
    rollout.report_apply(ReconcileOutcome(before, Plan(cluster.name, None, None, ()), ApplyResult("sim"), after), gate)
    cluster.reported = result.board.failed_writes == failed_writes


def check_order(result: Result) -> list[str]:
    """Every apply held to the rule from the simulation's own records, not the decision's code: a cluster of
    wave k applies commit X only after every cluster of each earlier wave j had a success report on X landed at
    least wave j's soak before, and no other cluster's failure report on X had landed."""
    rollout_config = result.config.rollout
    assert rollout_config is not None
    landed: dict[tuple[str, str], list[CommitStatus]] = {}
    for statuses in result.board.statuses.values():
        for status in statuses:
            if status.cluster is not None:
                landed.setdefault((status.cluster, status.sha), []).append(status)
    violations = []
    for apply in result.applies:
        failed = [
            c
            for (c, sha), reports in landed.items()
            if sha == apply.commit
            and c != apply.cluster
            and any(s.state == "failure" and s.at <= apply.at for s in reports)
        ]
        if failed:
            violations.append(f"{apply.cluster} applied {apply.commit[:7]} after {failed[0]}'s failure had landed")
        for wave in rollout_config.waves[: apply.wave]:
            for member in rollout_config.members[wave.index]:
                reports = landed.get((member, apply.commit), [])
                soaked = any(s.state == "success" and s.at <= apply.at - wave.soak_s for s in reports)
                if not soaked:
                    violations.append(
                        f"{apply.cluster} (wave {apply.wave + 1}) applied {apply.commit[:7]} before "
                        f"{member} (wave {wave.number}) had succeeded a soak before"
                    )
                    break
    return violations


SCENARIOS: Sequence[Scenario] = (
    Scenario("good change", ((0.0, GOOD),), hours=12),
    Scenario("bad change", ((0.0, BAD),), hours=6),
    Scenario("bad change, then a fix merged at 6h", ((0.0, BAD), (6 * HOUR, FIX)), hours=18),
    Scenario("good change, two runs of each cluster at once", ((0.0, GOOD),), hours=12, duplicate_runs=True),
    Scenario("bad change, two runs of each cluster at once", ((0.0, BAD),), hours=6, duplicate_runs=True),
    Scenario("good change, every status lands 20 min late", ((0.0, GOOD),), hours=12, write_delay_s=20 * 60),
    Scenario("bad change, every status lands 20 min late", ((0.0, BAD),), hours=6, write_delay_s=20 * 60),
    Scenario(
        "good change, 5 % of status reads and writes 5xx", ((0.0, GOOD),), hours=16, read_5xx=0.05, write_5xx=0.05
    ),
    Scenario("bad change, 20 % of status reads and writes 5xx", ((0.0, BAD),), hours=6, read_5xx=0.2, write_5xx=0.2),
)
