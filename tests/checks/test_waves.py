"""The wave decision (checks/waves.py) and the `rollout:` block of kai-gitops.yaml."""

from __future__ import annotations

import pytest

from reconciler.checks.waves import decide, standings
from reconciler.core.errors import UserError
from reconciler.model.rollout import CommitStatus, apply_context, parse_soak, show_soak
from reconciler.sources.repoconfig import parse_repo_config

X, Y, OLD = "x" * 40, "y" * 40, "o" * 40
HOUR = 3600.0


def config(rollout: str, clusters: str = "") -> bytes:
    entry = "  - {{name: {}, mode: standalone, kaiChartVersion: v0.16.7, kaiValuesFile: k.yaml}}\n"
    entries = clusters or "".join(entry.format(n) for n in ("a1", "a2", "b1", "b2", "c1"))
    return f"apiVersion: kai-gitops/v1\nclusters:\n{entries}rollout:\n{rollout}".encode()


WAVES = """  waves:
    - {name: canary, clusters: [a1, a2], soak: 1h}
    - {name: main, clusters: [b1, b2], soak: 30m}
"""
ROLLOUT = parse_repo_config(config(WAVES)).rollout


def ok(cluster: str, at: float, sha: str = X, state: str = "success") -> CommitStatus:
    return CommitStatus(sha, apply_context(cluster), state, at)  # type: ignore[arg-type]


def test_the_config_resolves_members_and_puts_the_unlisted_last() -> None:
    assert ROLLOUT is not None
    assert ROLLOUT.members == (("a1", "a2"), ("b1", "b2"), ("c1",))
    assert [(w.name, w.soak_s) for w in ROLLOUT.waves] == [("canary", HOUR), ("main", 1800.0), ("unlisted", 0.0)]


def test_a_selector_picks_clusters_by_their_entry_labels_and_the_override_label_is_read() -> None:
    clusters = (
        "  - {name: a1, mode: standalone, kaiChartVersion: v0.16.7, kaiValuesFile: k.yaml, "
        "labels: {ring: canary}}\n"
        "  - {name: b1, mode: standalone, kaiChartVersion: v0.16.7, kaiValuesFile: k.yaml, "
        "labels: {kai-gitops/override: 'true'}}\n"
    )
    rollout = parse_repo_config(config("  waves:\n    - {name: canary, selector: {ring: canary}}\n", clusters)).rollout
    assert rollout is not None and rollout.members == (("a1",), ("b1",)) and rollout.overridden == {"b1"}


@pytest.mark.parametrize(
    ("waves", "message"),
    [
        ("  waves:\n    - {name: w, clusters: [nope]}\n", "names cluster 'nope', which clusters does not declare"),
        (
            "  waves:\n    - {name: w, clusters: [a1]}\n    - {name: v, clusters: [a1]}\n",
            "cluster 'a1' is in rollout waves 'w' and 'v'",
        ),
        ("  waves:\n    - {name: w, clusters: [a1], soak: 1d}\n", "does not match"),
        ("  waves:\n    - {name: w, clusters: [a1], selector: {a: b}}\n", "rollout.waves.0"),
        # an empty wave would pass at once, and the next apply with no canary before it
        (
            "  waves:\n    - {name: canary, selector: {ring: canry}}\n    - {name: w, clusters: [a1]}\n",
            "rollout wave 'canary' has no cluster",
        ),
        ("  waves:\n    - {name: w, clusters: []}\n", "should be non-empty"),
        ("  waves:\n    - {name: unlisted, clusters: [a1]}\n", "rollout wave name 'unlisted' is the last wave's"),
    ],
)
def test_a_wrong_rollout_is_one_line_naming_where(waves: str, message: str) -> None:
    with pytest.raises(UserError) as caught:
        parse_repo_config(config(waves))
    assert message in caught.value.line() and "kai-gitops.yaml:" in caught.value.line()


def test_soak_durations() -> None:
    assert parse_soak("1h30m") == 5400.0 and parse_soak("45s") == 45.0 and show_soak(5400.0) == "1h30m"


def test_the_first_wave_applies_at_once_and_the_next_waits_for_its_report() -> None:
    assert decide(ROLLOUT, "a1", X, frozenset(), [], 0.0).apply
    waiting = decide(ROLLOUT, "b1", X, frozenset(), [ok("a1", 0.0)], 2 * HOUR)
    assert not waiting.apply and waiting.reason.endswith("a2 has not reported success for xxxxxxxxxxxx")


def test_the_soak_counts_from_the_first_success_of_the_streak() -> None:
    reports = [ok("a1", 0.0), ok("a2", 0.0), ok("a1", 0.9 * HOUR), ok("a2", 0.9 * HOUR)]  # hourly re-reports
    assert not decide(ROLLOUT, "b1", X, frozenset(), reports, 0.5 * HOUR).apply
    assert decide(ROLLOUT, "b1", X, frozenset(), reports, HOUR).apply
    recovered = [ok("a1", 0.0, state="failure"), ok("a1", 0.5 * HOUR), ok("a2", 0.0)]
    assert not decide(ROLLOUT, "b1", X, frozenset(), recovered, 1.2 * HOUR).apply  # 42m since it recovered


def test_every_earlier_wave_soaks_not_only_the_last() -> None:
    reports = [ok("a1", 0.0), ok("a2", 0.0), ok("b1", 0.0), ok("b2", 0.0)]
    assert not decide(ROLLOUT, "c1", X, frozenset(), reports, 0.6 * HOUR).apply  # canary's hour not over
    assert decide(ROLLOUT, "c1", X, frozenset(), reports, HOUR).apply


def test_a_failure_holds_every_other_cluster_and_names_the_wave() -> None:
    reports = [ok("a1", 0.0), ok("a2", 0.0, state="failure")]
    for cluster in ("a1", "b1", "c1"):
        held = decide(ROLLOUT, cluster, X, frozenset(), reports, 5 * HOUR)
        assert (held.apply, held.state, held.reason) == (False, "held", "held by wave 1: a2 failed")
    assert decide(ROLLOUT, "a2", X, frozenset(), reports, 5 * HOUR).apply  # its own report: it may retry


def test_a_tie_between_success_and_failure_is_a_failure() -> None:
    held = decide(ROLLOUT, "b1", X, frozenset(), [ok("a1", 0.0), ok("a2", 0.0), ok("a2", 0.0, state="error")], 5 * HOUR)
    assert held.state == "held"


def test_reports_on_a_descendant_count_and_on_an_ancestor_do_not() -> None:
    on_descendant = [ok("a1", 0.0, sha=Y), ok("a2", 0.0, sha=Y)]
    assert decide(ROLLOUT, "b1", X, frozenset({Y}), on_descendant, 2 * HOUR).apply
    assert not decide(ROLLOUT, "b1", X, frozenset(), on_descendant, 2 * HOUR).apply
    failed_before = [ok("a1", 0.0, sha=OLD, state="failure")]  # a newer commit starts the rollout again
    assert decide(ROLLOUT, "a2", X, frozenset(), failed_before, HOUR).apply
    assert decide(ROLLOUT, "b1", X, frozenset(), failed_before, HOUR).state == "waiting"


def test_a_failure_on_the_commit_holds_it_after_a_success_on_a_descendant() -> None:
    """a1 failed on X, then succeeded on Y, the fix: Y may roll on, X may not (a cluster whose branch still reads
    X would apply the change that failed), whichever report was written last."""
    fixed = [ok("a1", 0.0, state="failure"), ok("a1", HOUR, sha=Y), ok("a2", HOUR, sha=Y)]
    assert decide(ROLLOUT, "b1", X, frozenset({Y}), fixed, 3 * HOUR).state == "held"
    assert decide(ROLLOUT, "b1", Y, frozenset(), fixed, 3 * HOUR).apply
    late = [ok("a1", HOUR, sha=Y), ok("a2", HOUR, sha=Y), ok("a1", 2 * HOUR, state="failure")]
    assert decide(ROLLOUT, "b1", X, frozenset({Y}), late, 3 * HOUR).state == "held"
    assert decide(ROLLOUT, "b1", Y, frozenset(), late, 3 * HOUR).apply
    retried = [*fixed, ok("a1", 2 * HOUR)]  # a1 ran X again and succeeded: X stands again
    assert decide(ROLLOUT, "b1", X, frozenset({Y}), retried, 4 * HOUR).apply
    failed_fix = [ok("a1", HOUR, sha=Y, state="failure"), ok("a1", 2 * HOUR), ok("a2", 2 * HOUR)]
    assert decide(ROLLOUT, "b1", X, frozenset({Y}), failed_fix, 4 * HOUR).apply  # X's own word is later


def test_an_override_status_or_label_releases() -> None:
    reports = [ok("a1", 0.0, state="failure"), CommitStatus(X, "kai-gitops/override", "success", 1.0)]
    assert decide(ROLLOUT, "b1", X, frozenset(), reports, HOUR).state == "override"
    assert decide(ROLLOUT, "b1", X, frozenset(), reports[:1], HOUR).state == "held"
    # an override names its commit: one on a descendant releases the descendant, not X
    on_descendant = [reports[0], CommitStatus(Y, "kai-gitops/override", "success", 1.0)]
    assert decide(ROLLOUT, "b1", X, frozenset({Y}), on_descendant, HOUR).state == "held"


def test_pending_statuses_and_other_contexts_are_not_reports() -> None:
    statuses = [ok("a1", 0.0, state="pending"), CommitStatus(X, "ci/build", "failure", 0.0)]
    assert standings(statuses, frozenset({X})) == {}


def test_no_rollout_applies() -> None:
    assert decide(None, "a1", X, frozenset(), [], 0.0).state == "no-rollout"
