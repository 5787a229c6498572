"""How long a finding has been reported (findings/age.py) and where its first-seen time comes from
(report/history.py): the cluster's PolicyReports, else a previous report, else this run."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import pytest

from reconciler.core.resources import queue_ref
from reconciler.findings.age import Age, duration_text, format_instant, parse_instant
from reconciler.findings.finding import Finding, Kind, Severity
from reconciler.report.history import age_note, first_seen_in, oldest_drift_age, with_ages
from reconciler.report.reader import report_from_dict
from reconciler.report.report import ClusterReport, Report

NOW = datetime(2026, 12, 1, 19, 30, tzinfo=UTC)
DAY = timedelta(days=1)


def finding(name: str, kind: Kind = Kind.DRIFT, *, waived: str | None = None) -> Finding:
    rule = "KAI-D-002" if kind is Kind.DRIFT else "KAI-Q-011"
    return Finding(rule, kind, Severity.ERROR, f"{name} differs", "prod", subject=queue_ref(name), waived_by=waived)


def report(*findings: Finding) -> Report:
    return Report("diff", [ClusterReport("prod", findings=list(findings))])


def ages(aged: Report) -> dict[str, datetime]:
    return {str(f.subject): f.age.first_seen for f in aged.clusters[0].findings if f.age}


# -- where the time comes from ------------------------------------------------------------------------------------


def test_policy_reports_win_over_the_previous_report_which_wins_over_now() -> None:
    a, b, c = finding("a"), finding("b"), finding("c")
    in_cluster = {a.fingerprint: NOW - 5 * DAY}
    previous = {a.fingerprint: NOW - 2 * DAY, b.fingerprint: NOW - 2 * DAY}
    aged = with_ages(report(a, b, c), [in_cluster, previous], NOW)
    assert ages(aged) == {"Queue/a": NOW - 5 * DAY, "Queue/b": NOW - 2 * DAY, "Queue/c": NOW}
    assert aged.generated_at == NOW
    assert all(f.age is not None and f.age.as_of == NOW for f in aged.clusters[0].findings)


def test_a_previous_report_with_another_fingerprint_set_new_is_now_resolved_is_gone() -> None:
    kept, resolved, new = finding("kept"), finding("resolved"), finding("new")
    earlier = with_ages(report(kept, resolved), [], NOW - 3 * DAY)
    previous = report_from_dict(earlier.to_dict())
    aged = with_ages(report(kept, new), [{}, first_seen_in(previous)], NOW)
    assert ages(aged) == {"Queue/kept": NOW - 3 * DAY, "Queue/new": NOW}
    assert [f["subject"]["name"] for f in aged.to_dict()["findings"]] == ["kept", "new"]


def test_an_earlier_reports_own_first_seen_wins_over_its_generation_time_and_its_file_time() -> None:
    old, plain = finding("old"), finding("plain")
    earlier = report(replace(old, age=Age(NOW - 9 * DAY, NOW - DAY)), plain)
    earlier.generated_at = NOW - DAY
    assert first_seen_in(earlier, NOW - 3 * DAY) == {old.fingerprint: NOW - 9 * DAY, plain.fingerprint: NOW - DAY}
    earlier.generated_at = None  # a report from before generatedAt: the file's time
    assert first_seen_in(earlier, NOW - 3 * DAY)[plain.fingerprint] == NOW - 3 * DAY
    assert plain.fingerprint not in first_seen_in(earlier)


def test_the_repository_findings_of_a_check_get_ages_too() -> None:
    note = Finding("KAI-W-002", Kind.VIOLATION, Severity.WARNING, "waiver matches nothing", "(repository)")
    earlier = Report("check", [], repository=[note])
    aged = with_ages(Report("check", [], repository=[note]), [first_seen_in(earlier, NOW - DAY)], NOW)
    assert aged.repository[0].age == Age(NOW - DAY, NOW)


def test_a_time_after_now_counts_as_now() -> None:
    a = finding("a")
    aged = with_ages(report(a), [{a.fingerprint: NOW + DAY}], NOW)
    assert ages(aged) == {"Queue/a": NOW} and aged.clusters[0].findings[0].age.new


def test_times_are_whole_seconds_in_utc() -> None:
    a = finding("a")
    two_hours_east = datetime(2026, 11, 30, 23, 30, 0, 999_999, tzinfo=timezone(timedelta(hours=2)))
    aged = with_ages(report(a), [{a.fingerprint: two_hours_east}], NOW + timedelta(microseconds=500))
    assert aged.generated_at == NOW and ages(aged) == {"Queue/a": datetime(2026, 11, 30, 21, 30, tzinfo=UTC)}
    assert format_instant(two_hours_east) == "2026-11-30T21:30:00Z"


# -- the JSON form ------------------------------------------------------------------------------------------------


def test_first_seen_and_generated_at_are_rfc3339_and_read_back() -> None:
    a = finding("a")
    data = with_ages(report(a), [{a.fingerprint: NOW - 3 * DAY}], NOW).to_dict()
    assert data["generatedAt"] == "2026-12-01T19:30:00Z"
    assert data["findings"][0]["firstSeen"] == "2026-11-28T19:30:00Z"
    back = report_from_dict(data)
    assert back.generated_at == NOW and back.clusters[0].findings[0].age == Age(NOW - 3 * DAY, NOW)
    assert back.to_dict() == data


def test_a_finding_without_history_has_a_null_first_seen() -> None:
    assert finding("a").to_dict()["firstSeen"] is None
    assert report(finding("a")).to_dict()["generatedAt"] is None


@pytest.mark.parametrize("text", ["2026-11-28", "2026-11-28T14:02:00", "yesterday", "2026-13-01T00:00:00Z"])
def test_a_time_without_a_zone_or_not_a_time_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_instant(text)


def test_offsets_and_fractions_are_read_as_utc_seconds() -> None:
    assert parse_instant("2026-11-28T16:02:00.75+02:00") == datetime(2026, 11, 28, 14, 2, tzinfo=UTC)
    assert parse_instant("2026-11-28t14:02:00z") == datetime(2026, 11, 28, 14, 2, tzinfo=UTC)


# -- durations as people read them -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "less than a minute"),
        (59.9, "less than a minute"),
        (60, "1 minute"),
        (119, "1 minute"),
        (120, "2 minutes"),
        (3599, "59 minutes"),
        (3600, "1 hour"),
        (7199, "1 hour"),
        (86399, "23 hours"),
        (86400, "1 day"),
        (3 * 86400 + 7200, "3 days"),
        (400 * 86400, "400 days"),
    ],
)
def test_durations_take_the_largest_whole_unit(seconds: float, text: str) -> None:
    assert duration_text(seconds) == text


def test_age_phrases() -> None:
    # A drift issue keeps its body while its findings stay the same: "new" keeps the instant that stays true.
    assert Age(NOW, NOW).phrase() == "new"
    assert Age(NOW, NOW).describe() == f"new (first seen {NOW:%Y-%m-%d %H:%M} UTC)"
    assert Age(NOW - 3 * DAY, NOW).phrase() == "for 3 days"
    assert Age(NOW - 3 * DAY, NOW).describe() == "for 3 days (first seen 2026-11-28 19:30 UTC)"
    assert Age(NOW - timedelta(seconds=30), NOW).phrase() == "for less than a minute"


def test_people_see_every_drifts_age_and_a_violations_once_it_is_not_new() -> None:
    new, old = Age(NOW, NOW), Age(NOW - 2 * DAY, NOW)
    assert age_note(replace(finding("d"), age=new)) == new.describe()
    assert age_note(replace(finding("v", Kind.VIOLATION), age=new)) is None
    assert age_note(replace(finding("v", Kind.VIOLATION), age=old)) == "for 2 days (first seen 2026-11-29 19:30 UTC)"
    assert age_note(finding("d")) is None


# -- the oldest drift, for the metric -----------------------------------------------------------------------------


def test_oldest_drift_counts_drift_that_is_not_waived_only() -> None:
    drift, young = finding("drift"), finding("young")
    waived = finding("waived", waived="waivers.yaml#0")
    violation = finding("violation", Kind.VIOLATION)
    earlier = {
        drift.fingerprint: NOW - 2 * DAY,
        young.fingerprint: NOW - DAY,
        waived.fingerprint: NOW - 9 * DAY,
        violation.fingerprint: NOW - 9 * DAY,
    }
    aged = with_ages(report(drift, young, waived, violation), [earlier], NOW)
    assert oldest_drift_age(aged.clusters[0]) == 2 * 86400
    clean = with_ages(report(violation), [earlier], NOW)
    assert oldest_drift_age(clean.clusters[0]) == 0
    assert oldest_drift_age(ClusterReport("prod", findings=[drift])) == 0  # no history at all
