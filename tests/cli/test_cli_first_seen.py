"""`firstSeen` through the command line: from `--previous-report`, from the cluster's PolicyReports (read, never
written by a run that does not publish them), else the run's start; the age in text, Markdown, the drift
issue and `kai_gitops_oldest_drift_age_seconds`; a bad previous report stops the run before anything is written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from reconciler.core.resources import CLUSTER_POLICY_REPORT
from reconciler.findings.age import format_instant, parse_instant
from reconciler.report.reader import finding_from_dict
from tests.support.githost_shared import TOKEN
from tests.support.helpers import DEMO_SNAPSHOTS, assert_one_line_error, run_cli
from tests.support.kubeserver import Fault
from tests.support.reconcile_support import Demo, demo_cluster
from tests.support.report_crds import WG, register_reports

DAY = timedelta(days=1)


def diff_args(repo: Path, *extra: Any) -> list[str]:
    return [
        "diff",
        "--repo",
        str(repo),
        "--cluster",
        "prod-addon",
        "--snapshot",
        str(DEMO_SNAPSHOTS / "prod-addon.yaml"),
        *[str(e) for e in extra],
    ]


def json_run(args: list[str], env: dict[str, str] | None = None) -> tuple[dict[str, Any], str]:
    code, out, err = run_cli([*args, "-o", "json"], env)
    assert code == 2, err
    return json.loads(out), err


def first_seen(report: dict[str, Any]) -> dict[str, str]:
    return {f["fingerprint"]: f["firstSeen"] for f in report["findings"]}


def previous_report(report: dict[str, Any], path: Path, when: dict[str, datetime]) -> Path:
    """`report` as an earlier run would have written it, with the given firstSeen per fingerprint (others are
    left out: resolved since)."""
    earlier = dict(
        report,
        findings=[
            dict(f, firstSeen=format_instant(when[f["fingerprint"]]))
            for f in report["findings"]
            if f["fingerprint"] in when
        ],
    )
    path.write_text(json.dumps(earlier))
    return path


def drift_and_violation(report: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    drift = next(f for f in report["findings"] if f["kind"] == "drift" and not f["waived_by"])
    violation = next(f for f in report["findings"] if f["kind"] == "violation" and not f["waived_by"])
    return drift, violation


# -- without history: now -----------------------------------------------------------------------------------------


def test_without_history_every_finding_is_first_seen_when_the_run_started(demo_repo: Path) -> None:
    before = datetime.now(UTC).replace(microsecond=0)
    report, _ = json_run(diff_args(demo_repo))
    after = datetime.now(UTC)
    started = parse_instant(report["generatedAt"])
    assert before <= started <= after
    assert set(first_seen(report).values()) == {report["generatedAt"]}


def test_text_says_a_new_drift_is_new_and_nothing_about_new_violations(demo_repo: Path, tmp_path: Path) -> None:
    earlier, _ = json_run(diff_args(demo_repo))
    earlier["findings"] = []  # an earlier run that saw none of today's findings
    previous = tmp_path / "previous.json"
    previous.write_text(json.dumps(earlier))
    code, out, err = run_cli(diff_args(demo_repo, "--previous-report", str(previous)))
    assert code == 2, err
    assert out.count("      new (first seen ") == earlier["summary"]["drift"] > 0


def test_without_an_earlier_source_text_claims_no_age(demo_repo: Path) -> None:
    """No PolicyReports read (a snapshot) and no --previous-report: every finding is first seen now, which says
    nothing about how new it is, so the text says nothing (JSON still carries firstSeen)."""
    code, out, err = run_cli(diff_args(demo_repo))
    assert code == 2, err
    assert "new (first seen" not in out and "first seen" not in out
    assert all(f["firstSeen"] for f in json_run(diff_args(demo_repo))[0]["findings"])


# -- --previous-report -----------------------------------------------------------------------------------------


def test_previous_report_gives_the_time_text_markdown_and_json_show_it(demo_repo: Path, tmp_path: Path) -> None:
    first, _ = json_run(diff_args(demo_repo))
    drift, violation = drift_and_violation(first)
    started = parse_instant(first["generatedAt"])
    old = started - 3 * DAY - timedelta(hours=5)
    # resolved since: listed before, not found now (a reader recomputes fingerprints, so another subject)
    gone = dict(drift, subject=dict(drift["subject"], name="deleted-since"))
    gone["fingerprint"] = finding_from_dict(gone).fingerprint
    first["findings"].append(gone)
    previous = previous_report(
        first,
        tmp_path / "previous.json",
        {drift["fingerprint"]: old, violation["fingerprint"]: started - 2 * DAY, gone["fingerprint"]: old - DAY},
    )

    markdown = tmp_path / "report.md"
    code, text, err = run_cli(
        diff_args(
            demo_repo,
            "--previous-report",
            previous,
            "-o",
            "text",
            "-o",
            f"json={tmp_path / 'report.json'}",
            "-o",
            f"markdown={markdown}",
        )
    )
    assert code == 2, err
    report = json.loads((tmp_path / "report.json").read_text())
    seen = first_seen(report)
    assert seen[drift["fingerprint"]] == format_instant(old)
    assert seen[violation["fingerprint"]] == format_instant(started - 2 * DAY)
    new = [fp for fp in seen if fp not in (drift["fingerprint"], violation["fingerprint"])]
    assert new and all(seen[fp] == report["generatedAt"] for fp in new)  # not in the previous report: now
    assert gone["fingerprint"] not in seen

    since = f"first seen {old:%Y-%m-%d %H:%M} UTC"
    assert f"for 3 days ({since})" in text and "for 2 days (first seen" in text
    assert f"Queue differs from Git · for 3 days ({since})</summary>" in markdown.read_text()


def test_a_previous_report_without_first_seen_counts_from_when_it_was_generated(
    demo_repo: Path, tmp_path: Path
) -> None:
    first, _ = json_run(diff_args(demo_repo))
    started = parse_instant(first["generatedAt"])
    for f in first["findings"]:
        del f["firstSeen"]  # as a report of an earlier kai-gitops
    first["generatedAt"] = format_instant(started - 4 * DAY)
    (tmp_path / "old.json").write_text(json.dumps(first))
    report, _ = json_run(diff_args(demo_repo, "--previous-report", tmp_path / "old.json"))
    assert set(first_seen(report).values()) == {format_instant(started - 4 * DAY)}


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (None, "previous report: cannot read the report: No such file or directory"),
        ('{\n  "tool": ', "previous report: not a JSON report"),
        ('{"kind": "List"}', "previous report: not a kai-gitops JSON report"),
        ("first-seen-bad", "previous report: report does not have the documented shape"),
    ],
    ids=["missing", "truncated", "not-ours", "bad-first-seen"],
)
def test_a_bad_previous_report_is_one_line_and_nothing_is_written(
    demo_repo: Path, tmp_path: Path, content: str | None, needle: str
) -> None:
    previous = tmp_path / "previous.json"
    if content == "first-seen-bad":
        report, _ = json_run(diff_args(demo_repo))
        report["findings"][0]["firstSeen"] = "yesterday"
        content = json.dumps(report)
    if content is not None:
        previous.write_text(content)
    out_file, metrics = tmp_path / "out.json", tmp_path / "m.prom"
    code, out, err = run_cli(
        diff_args(
            demo_repo,
            "--previous-report",
            previous,
            "-o",
            f"json={out_file}",
            "--metrics-file",
            metrics,
            "--log-format",
            "text",
        )
    )
    line = assert_one_line_error(
        code,
        out,
        err,
        str(previous),
        needle,
        "pass a report an earlier run wrote with -o json, or drop --previous-report",
    )
    assert line.startswith("kai-gitops: error: ")
    assert not out_file.exists()


# -- the drift issue ---------------------------------------------------------------------------------------------


def test_the_drift_issue_says_how_long_each_drift_has_lasted(
    demo_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.support.githost.github import GitHubStandIn

    first, _ = json_run(diff_args(demo_repo))
    drift, _violation = drift_and_violation(first)
    old = parse_instant(first["generatedAt"]) - 3 * DAY
    previous = previous_report(first, tmp_path / "previous.json", {drift["fingerprint"]: old})
    monkeypatch.setattr("reconciler.githost.github.WRITE_INTERVAL", 0)
    server = GitHubStandIn(token=TOKEN).start()
    try:
        code, _out, err = run_cli(
            diff_args(
                demo_repo,
                "--previous-report",
                previous,
                "--git-host-url",
                server.url,
                "--report-to",
                "github",
                "--git-host-repo",
                "acme/gitops",
            ),
            {"GITHUB_TOKEN": TOKEN},
        )
        assert code == 2 and "drift issue #1 for prod-addon: opened" in err, err
        body = server.issues[1]["body"]
        assert f"· for 3 days (first seen {old:%Y-%m-%d %H:%M} UTC)</summary>" in body
        assert len(re.findall(r"· new \(first seen [0-9: -]+ UTC\)</summary>", body)) == first["summary"]["drift"] - 1
    finally:
        server.stop()


# -- the metric ---------------------------------------------------------------------------------------------------


def gauge(path: Path, name: str) -> dict[str, float]:
    families = text_string_to_metric_families(path.read_text())
    return {
        sample.labels.get("cluster", ""): sample.value
        for family in families
        for sample in family.samples
        if sample.name == name
    }


def test_oldest_drift_age_in_the_textfile_counts_drift_only(demo_repo: Path, tmp_path: Path) -> None:
    first, _ = json_run(diff_args(demo_repo))
    drift, violation = drift_and_violation(first)
    started = parse_instant(first["generatedAt"])
    previous = previous_report(
        first,
        tmp_path / "previous.json",
        {drift["fingerprint"]: started - 2 * DAY, violation["fingerprint"]: started - 9 * DAY},
    )
    metrics = tmp_path / "kai-gitops.prom"
    report, _ = json_run(diff_args(demo_repo, "--previous-report", previous, "--metrics-file", metrics))
    age = parse_instant(report["generatedAt"]) - (started - 2 * DAY)
    assert gauge(metrics, "kai_gitops_oldest_drift_age_seconds") == {"prod-addon": age.total_seconds()}


def test_oldest_drift_age_is_zero_without_drift(demo_repo: Path, tmp_path: Path) -> None:
    metrics = tmp_path / "kai-gitops.prom"
    code, out, err = run_cli(["check", "--repo", demo_repo, "--metrics-file", metrics, "-o", "json"])
    assert code in (0, 2), err
    clusters = {c["cluster"] for c in json.loads(out)["clusters"]}
    assert gauge(metrics, "kai_gitops_oldest_drift_age_seconds") == dict.fromkeys(clusters, 0.0)


def test_a_push_of_several_clusters_carries_the_oldest_drift_of_them_all() -> None:
    """A push leaves the cluster to the grouping key (`all` for `check`): one series, the oldest drift."""
    from prometheus_client import generate_latest

    from reconciler.core.resources import queue_ref
    from reconciler.findings.finding import Finding, Kind, Severity
    from reconciler.report.history import with_ages
    from reconciler.report.report import ClusterReport, Report
    from reconciler.telemetry.metrics import RunFacts, build_registry

    def drift(cluster: str) -> Finding:
        return Finding("KAI-D-002", Kind.DRIFT, Severity.ERROR, "quota differs", cluster, queue_ref("q"))

    now = datetime(2026, 12, 1, tzinfo=UTC)
    a, b = drift("a"), drift("b")
    report = with_ages(
        Report("check", [ClusterReport("a", findings=[a]), ClusterReport("b", findings=[b])]),
        [{a.fingerprint: now - DAY, b.fingerprint: now - 2 * DAY}],
        now,
    )
    facts = RunFacts("check", "all", 0.0, 1.0, ok=True, exit_code=2, report=report)
    pushed = [
        s
        for f in text_string_to_metric_families(generate_latest(build_registry(facts, cluster_label=False)).decode())
        for s in f.samples
        if s.name == "kai_gitops_oldest_drift_age_seconds"
    ]
    assert [(s.labels, s.value) for s in pushed] == [({}, 2 * 86400)]


# -- the cluster's PolicyReports ----------------------------------------------------------------------------------


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    yield from demo_cluster(tmp_path)


def live_diff(demo: Demo, *extra: Any) -> list[str]:
    return [
        "diff",
        "--repo",
        str(demo.repo),
        "--cluster",
        "prod-addon",
        "--kubeconfig",
        str(demo.kubeconfig),
        *[str(e) for e in extra],
    ]


def cluster_report(demo: Demo) -> dict[str, Any]:
    found = demo.server.get_object(CLUSTER_POLICY_REPORT.api_version, "ClusterPolicyReport", "kai-gitops-prod-addon")
    assert found is not None
    return found


def test_policy_reports_come_first_and_a_run_that_does_not_publish_only_reads_them(demo: Demo) -> None:
    register_reports(demo.server, WG)
    code, _out, err = demo.reconcile("--report-to", "policyreport")
    assert code == 2, err
    stored = cluster_report(demo)
    first, report = stored["results"][0], stored["results"][1]
    in_cluster = datetime.now(UTC).replace(microsecond=0) - 5 * DAY
    first["timestamp"] = {"seconds": int(in_cluster.timestamp()), "nanos": 0}
    stored["results"] = [first]  # the second finding is not listed: the previous report gives its time
    demo.server.add(stored)
    fingerprints = [first["properties"]["fingerprint"], report["properties"]["fingerprint"]]

    started = datetime.now(UTC).replace(microsecond=0)
    earlier, _ = json_run(live_diff(demo))
    previous = previous_report(earlier, demo.tmp / "previous.json", dict.fromkeys(fingerprints, started - 2 * DAY))
    mark = len(demo.server.requests)
    report_now, _ = json_run(live_diff(demo, "--previous-report", previous))
    seen = first_seen(report_now)
    assert seen[fingerprints[0]] == format_instant(in_cluster)
    assert seen[fingerprints[1]] == format_instant(started - 2 * DAY)
    requests = demo.server.requests[mark:]
    assert any("clusterpolicyreports" in r.path for r in requests)
    assert all(r.method == "GET" for r in requests)  # a run that does not publish reports only reads them

    # A run that publishes keeps each listed result's time and stamps the one it adds with its firstSeen.
    code, _out, err = demo.reconcile("--report-to", "policyreport", "--previous-report", previous)
    assert code == 2, err
    stamps = {r["properties"]["fingerprint"]: r["timestamp"]["seconds"] for r in cluster_report(demo)["results"]}
    assert stamps[fingerprints[0]] == int(in_cluster.timestamp())
    assert stamps[fingerprints[1]] == int((started - 2 * DAY).timestamp())


def test_policy_reports_that_cannot_be_read_leave_the_other_sources(demo: Demo) -> None:
    register_reports(demo.server, WG)
    earlier, _ = json_run(live_diff(demo))
    drift, _violation = drift_and_violation(earlier)
    old = parse_instant(earlier["generatedAt"]) - 3 * DAY
    previous = previous_report(earlier, demo.tmp / "previous.json", {drift["fingerprint"]: old})
    demo.server.inject_fault(
        Fault(r"^/apis/wgpolicyk8s\.io/v1alpha2/clusterpolicyreports", method="GET", status=403, times=-1)
    )
    report, err = json_run(live_diff(demo, "--previous-report", previous, "--log-format", "text"))
    assert first_seen(report)[drift["fingerprint"]] == format_instant(old)
    notes = [line for line in err.splitlines() if "first-seen times" in line]
    assert len(notes) == 1 and "PolicyReports of cluster prod-addon were not read" in notes[0], err
    assert "HTTP 403" in notes[0]


def test_a_live_run_with_no_policy_report_and_no_previous_report_claims_no_age(demo: Demo) -> None:
    """A manual live run reads the PolicyReports, finds none: that is no history, so no drift is called new."""
    register_reports(demo.server, WG)
    code, out, err = run_cli(live_diff(demo))
    assert code == 2, err
    assert "Drift (live differs from Git):" in out and "first seen" not in out
