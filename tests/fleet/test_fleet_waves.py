"""The simulated fleet under rollout waves (tests/support/fleet.py; the 1,000-cluster run is bench/fleet_waves.py),
and the proof that its in-process status board answers as the GitHub stand-in does through the product's client."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from reconciler.checks.waves import decide
from reconciler.githost.base import HostSettings
from reconciler.githost.github import GitHubHost
from reconciler.githost.retry import RetryPolicy
from reconciler.model.rollout import CommitStatus, apply_context
from reconciler.reconcile import rollout
from reconciler.reconcile.settings import RolloutSettings
from reconciler.report.report import ClusterReport, GitInfo, Report
from tests.support.fleet import BAD, FIX, GOOD, HOUR, SCENARIOS, StatusBoard, fleet_config, simulate, verdict
from tests.support.githost._common import Fault
from tests.support.githost.github import GitHubStandIn
from tests.support.githost_shared import FakeTime

SIZE = 50
CONFIG = fleet_config(SIZE)
TOKEN = "ghp_FleetTestTokenThatMustNeverBeShown01234567"
RESULTS = {s.name: simulate(SIZE, s, config=CONFIG) for s in SCENARIOS}


def test_the_bad_change_is_unhealthy_by_nvcas_own_check_and_the_good_one_is_not() -> None:
    assert not verdict(BAD).healthy and "resource violation for queue default-queue" in verdict(BAD).errors[0]
    assert verdict(GOOD).healthy and verdict(FIX).healthy


@pytest.mark.parametrize("name", [s.name for s in SCENARIOS])
def test_no_cluster_applies_out_of_order(name: str) -> None:
    assert RESULTS[name].order_violations == []


@pytest.mark.parametrize("name", [s.name for s in SCENARIOS if s.name.startswith("bad change") and "fix" not in s.name])
def test_the_bad_change_reaches_the_first_wave_only_and_every_later_cluster_is_held(name: str) -> None:
    result = RESULTS[name]
    table = result.table()
    first_wave = set(CONFIG.rollout.members[0]) if CONFIG.rollout else set()
    assert {a.cluster for a in result.applies} <= first_wave and table["applied"] >= 1
    assert table["time_to_halt_min"] is not None
    later = [c for c in result.clusters if c.name not in first_wave]
    for cluster in later:
        assert cluster.applied != BAD
        if cluster.last is not None and cluster.last.state != "unreadable":  # a 5xx on its last read: no say
            assert cluster.last.state == "held" and cluster.last.reason.startswith("held by wave 1: ")
    assert sum(1 for c in later if c.last is not None and c.last.state == "held") >= len(later) * 0.6


@pytest.mark.parametrize("name", [s.name for s in SCENARIOS if s.name.startswith("good change")])
def test_the_good_change_reaches_every_cluster_wave_by_wave_each_after_its_soak(name: str) -> None:
    result = RESULTS[name]
    assert CONFIG.rollout is not None
    assert all(c.applied == GOOD for c in result.clusters)
    done = {}
    for index in range(len(CONFIG.rollout.waves)):
        times = [a.at for a in result.applies if a.wave == index]
        assert len(times) == len(CONFIG.rollout.members[index])
        done[index] = (min(times), max(times))
    for index in range(1, len(done)):
        assert done[index][0] >= done[index - 1][1] + CONFIG.rollout.waves[index - 1].soak_s


def test_a_fix_merged_after_the_halt_releases_every_held_cluster() -> None:
    result = RESULTS["bad change, then a fix merged at 6h"]
    assert all(c.applied == FIX for c in result.clusters)
    assert {a.cluster for a in result.applies if a.commit == BAD} <= set(CONFIG.rollout.members[0])  # type: ignore


def test_two_runs_at_once_write_each_report_at_most_twice_and_never_disagree() -> None:
    board = RESULTS["good change, two runs of each cluster at once"].board
    reports = board.statuses[GOOD]
    assert {s.state for s in reports} == {"success"} and len(reports) <= 2 * SIZE


# -- the in-process board answers as the GitHub stand-in does ----------------------------------------------


@pytest.fixture
def github() -> Iterator[GitHubStandIn]:
    server = GitHubStandIn(token=TOKEN).start()
    yield server
    server.stop()
    server.assert_clean()


def host(server: GitHubStandIn, fake: FakeTime) -> GitHubHost:
    config = HostSettings("github", server.url, server.full_name, TOKEN)
    return GitHubHost(
        config, policy=RetryPolicy(config, "GitHub", sleep=fake.sleep, clock=fake.clock), write_interval=0
    )


SCRIPT: list[tuple[float, str, str, str]] = (  # (time, sha, cluster, state): more than a page on one commit
    [(100.4, GOOD, f"gpu-{i:04d}", "success") for i in range(120)]
    + [(200.9, GOOD, "gpu-0003", "failure"), (300.0, BAD, "gpu-0000", "failure"), (300.0, GOOD, "gpu-0003", "success")]
    + [(4000.0, GOOD, f"gpu-{i:04d}", "success") for i in range(5, 8)]
)


def shape(statuses: list[CommitStatus]) -> list[tuple[Any, ...]]:
    return [(s.sha, s.context, s.state, s.at, s.description) for s in statuses]


def test_the_board_and_the_github_stand_in_give_the_same_reads_and_decisions(github: GitHubStandIn) -> None:
    now = [0.0]
    board = StatusBoard(lambda: now[0])
    client = host(github, FakeTime())
    github.status_clock = lambda: now[0]
    for at, sha, cluster, state in SCRIPT:
        now[0] = at
        description = f"{state} of {cluster} " + "x" * 150  # longer than GitHub keeps: cut alike
        board.set_commit_status(sha, apply_context(cluster), state, description)
        client.set_commit_status(sha, apply_context(cluster), state, description)
    for sha in (GOOD, BAD, FIX):
        ours, theirs = board.commit_statuses(sha), client.commit_statuses(sha)
        assert shape(ours) == shape(theirs)
        for cluster in ("gpu-0000", "gpu-0010", "gpu-0049"):
            for at in (150.0, 3700.0, 4000.0 + HOUR):
                assert decide(CONFIG.rollout, cluster, sha, frozenset(), ours, at) == decide(
                    CONFIG.rollout, cluster, sha, frozenset(), theirs, at
                )


def test_a_5xx_on_the_read_fails_closed_alike(github: GitHubStandIn) -> None:
    github.inject(Fault(503, times=10, method="GET", path_contains="/statuses"))
    report = Report("reconcile", [ClusterReport("gpu-0000", GitInfo("fleet", "main", GOOD))], config=CONFIG)
    client = host(github, FakeTime())
    board = StatusBoard(lambda: 0.0, read_5xx=1.0)
    gates = [
        rollout.gate(
            report,
            RolloutSettings(
                board=lambda _r, b=b: b,
                descendants=lambda _c: (),  # type: ignore
                rollout_before=lambda _c: None,
            ),
        )
        for b in (client, board)
    ]
    assert [g.decision.state for g in gates if g is not None] == ["unreadable", "unreadable"]
    assert not any(g.decision.apply for g in gates if g is not None)


class _Unreadable:
    """A host whose answer the client cannot read: a proxy's login page, a changed API (not a UserError)."""

    def commit_statuses(self, sha: str) -> list[CommitStatus]:
        raise TypeError("string indices must be integers, not 'str'")

    def set_commit_status(self, sha: str, context: str, state: str, description: str) -> CommitStatus:
        raise AssertionError("nothing is reported after a failed read")


def test_any_error_reading_the_statuses_or_the_parent_fails_closed() -> None:
    report = Report("reconcile", [ClusterReport("gpu-0010", GitInfo("fleet", "main", GOOD))], config=CONFIG)
    board = StatusBoard(lambda: 0.0)
    broken = rollout.gate(
        report,
        RolloutSettings(board=lambda _r: _Unreadable(), descendants=lambda _c: (), rollout_before=lambda _c: None),
    )
    assert broken is not None and broken.decision.state == "unreadable" and not broken.decision.apply
    assert "TypeError: string indices" in broken.decision.reason

    def parent_unreadable(_commit: str) -> None:
        raise OSError("object file is corrupt")

    corrupt = rollout.gate(
        report, RolloutSettings(board=lambda _r: board, descendants=lambda _c: (), rollout_before=parent_unreadable)
    )
    assert corrupt is not None and corrupt.decision.state == "unreadable" and "OSError" in corrupt.decision.reason
