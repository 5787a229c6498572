"""When each finding was first reported: the cluster's PolicyReports, else a previous report, else this run.

    earlier = [in_policy_reports, first_seen_in(previous_report, written=file_mtime)]
    report = with_ages(report, earlier, now=run_start)

Each source maps fingerprints to first-seen times. The first source that knows a fingerprint gives its time,
so a finding the PolicyReports list keeps their time whatever a previous report says; one that no source knows
is new, first seen `now`. A finding that was resolved and is reported again later is new again only if no
source still lists it. A time after `now` (a clock ahead, an edited file) counts as `now`. `age_note` is what
the formats for people print about it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from reconciler.findings.age import Age, instant
from reconciler.findings.finding import Finding, Kind
from reconciler.report.report import ClusterReport, Report

FirstSeen = Mapping[str, datetime]  # fingerprint -> when it was first reported


def first_seen_in(previous: Report, written: datetime | None = None) -> dict[str, datetime]:
    """From an earlier report of this tool: each finding's own `firstSeen`, else the report's `generatedAt`,
    else `written` (when its file was written: a report from before either existed)."""
    fallback = previous.generated_at or written
    seen: dict[str, datetime] = {}
    for finding in [*previous.repository, *(f for c in previous.clusters for f in c.findings)]:
        when = finding.age.first_seen if finding.age else fallback
        if when is not None:
            seen[finding.fingerprint] = min(seen.get(finding.fingerprint, when), when)
    return seen


def with_ages(report: Report, earlier: Sequence[FirstSeen], now: datetime) -> Report:
    """`report` generated at `now`, each finding with its age (sources in order of precedence; none: nothing
    earlier was looked at)."""
    now = instant(now)

    def aged(finding: Finding) -> Finding:
        first = next((source[finding.fingerprint] for source in earlier if finding.fingerprint in source), now)
        return replace(finding, age=Age(min(instant(first), now), now, looked_back=bool(earlier)))

    clusters = [replace(c, findings=[aged(f) for f in c.findings]) for c in report.clusters]
    return replace(report, clusters=clusters, repository=[aged(f) for f in report.repository], generated_at=now)


def age_note(finding: Finding) -> str | None:
    """What the outputs for people say about a finding's age: every drift's, and a violation's once an
    earlier run reported it too (a pull request check would otherwise say "new" under every finding)."""
    age = finding.age
    # "new" is news only when earlier runs were asked: without any source every finding is first seen now.
    if age is None or (age.new and (finding.kind is not Kind.DRIFT or not age.looked_back)):
        return None
    return age.describe()


def oldest_drift_age(cluster: ClusterReport) -> float:
    """Seconds since the oldest drift of `cluster` that is not waived was first reported; 0 without drift."""
    return max((f.age.seconds for f in cluster.active() if f.kind is Kind.DRIFT and f.age is not None), default=0.0)
