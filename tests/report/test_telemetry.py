"""Metrics (textfile and Pushgateway) and JSON logs of whole runs, plus `--report-to policyreport` end to end.

The demo cluster is served by the API test server (tests/support/reconcile_support.py); metrics are parsed back with
prometheus_client's own parser, from the textfile and from the Pushgateway stand-in (tests/support/pushgateway.py).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from reconciler.core.resources import CLUSTER_POLICY_REPORT
from reconciler.telemetry.logs import JsonFormatter, phase, run_context
from tests.support.helpers import DEMO_SNAPSHOTS, run_cli
from tests.support.kubeserver import Fault
from tests.support.pushgateway import PushgatewayStandin
from tests.support.reconcile_support import Demo, demo_cluster
from tests.support.report_crds import WG, crd_schema, register_reports


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    yield from demo_cluster(tmp_path)


def samples(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Metric name -> [(labels, value)], parsed by prometheus_client (fails on anything malformed)."""
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((dict(sample.labels), sample.value))
    return found


def value(found: dict[str, list[tuple[dict[str, str], float]]], name: str, **labels: str) -> float:
    matches = [v for lbl, v in found[name] if all(lbl.get(k) == want for k, want in labels.items())]
    assert len(matches) == 1, (name, labels, found.get(name))
    return matches[0]


def json_lines(stderr: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in stderr.splitlines() if line.strip()]
    assert lines, "no log lines"
    return lines


def test_reconcile_writes_policy_reports_metrics_and_json_logs(demo: Demo, tmp_path: Path) -> None:
    register_reports(demo.server, WG)
    metrics = tmp_path / "textfile" / "kai-gitops.prom"
    metrics.parent.mkdir()
    code, report, err = demo.reconcile_json(
        "--report-to", "policyreport", "--metrics-file", metrics, "--log-format", "json"
    )
    assert code == 2, err

    cpolr = demo.server.get_object(CLUSTER_POLICY_REPORT.api_version, "ClusterPolicyReport", "kai-gitops-prod-addon")
    assert cpolr is not None
    jsonschema.validate(cpolr, crd_schema(CLUSTER_POLICY_REPORT))
    listed = {r["properties"]["fingerprint"] for r in cpolr["results"]}
    cluster_scoped = {
        f["fingerprint"] for f in report["findings"] if not (f["subject"] or {}).get("namespace") and not f["waived_by"]
    }
    assert cluster_scoped <= listed

    found = samples(metrics.read_text())
    active = [f for f in report["findings"] if not f["waived_by"]]
    assert sum(v for _, v in found["kai_gitops_findings"]) == len(active)
    first = active[0]
    assert (
        value(
            found,
            "kai_gitops_findings",
            cluster="prod-addon",
            rule=first["rule"],
            severity=first["severity"],
            kind=first["kind"],
        )
        >= 1
    )
    assert value(found, "kai_gitops_drift", cluster="prod-addon") == report["summary"]["drift"]
    assert value(found, "kai_gitops_changes_planned", cluster="prod-addon") == len(report["plan"]["changes"])
    assert value(found, "kai_gitops_changes_applied", cluster="prod-addon") == 0
    assert value(found, "kai_gitops_last_run_success", cluster="prod-addon", command="reconcile") == 1
    assert value(found, "kai_gitops_last_run_exit_code", cluster="prod-addon", command="reconcile") == 2
    assert value(found, "kai_gitops_run_duration_seconds", cluster="prod-addon", command="reconcile") > 0
    assert value(found, "kai_gitops_live_read_retries", cluster="prod-addon") == 0
    assert list(metrics.parent.iterdir()) == [metrics]  # the temp file was renamed, none left behind

    lines = json_lines(err)
    run_ids = {line["runId"] for line in lines}
    assert len(run_ids) == 1 and all(len(r) == 12 for r in run_ids)
    assert {"run-start", "run-end"} <= {line.get("event") for line in lines}
    written = [line for line in lines if line.get("audit") == "create"]
    assert written and all(line["cluster"] == "prod-addon" for line in written)


def test_apply_run_counts_applied_changes_and_updates_the_report_in_place(demo: Demo, tmp_path: Path) -> None:
    register_reports(demo.server, WG)
    metrics = tmp_path / "m.prom"
    demo.reconcile("--report-to", "policyreport", "--metrics-file", metrics)
    before = demo.server.get_object(CLUSTER_POLICY_REPORT.api_version, "ClusterPolicyReport", "kai-gitops-prod-addon")
    mark = len(demo.server.requests)
    code, _out, err = demo.reconcile("--apply", "--report-to", "policyreport", "--metrics-file", metrics)
    assert code in (0, 2), err
    found = samples(metrics.read_text())
    assert value(found, "kai_gitops_changes_applied", cluster="prod-addon") == 3
    assert value(found, "kai_gitops_changes_failed", cluster="prod-addon") == 0
    after = demo.server.get_object(CLUSTER_POLICY_REPORT.api_version, "ClusterPolicyReport", "kai-gitops-prod-addon")
    assert before is not None and after is not None
    assert after["metadata"]["uid"] == before["metadata"]["uid"] and len(after["results"]) < len(before["results"])
    report_writes = [
        (r.method, r.path) for r in demo.server.requests[mark:] if r.method != "GET" and "wgpolicyk8s.io" in r.path
    ]
    assert ("PUT", "/apis/wgpolicyk8s.io/v1alpha2/clusterpolicyreports/kai-gitops-prod-addon") in report_writes
    assert not any(m == "POST" and "clusterpolicyreports" in p for m, p in report_writes)


def test_absent_report_crds_warn_once_and_the_run_goes_on(demo: Demo) -> None:
    code, out, err = demo.reconcile("--report-to", "policyreport", "--log-format", "text")
    assert code == 2 and "Plan:" in out
    warnings = [line for line in err.splitlines() if "no reports written" in line]
    assert len(warnings) == 1 and warnings[0].startswith("kai-gitops: warning: policy reports:")
    assert not any(r.method != "GET" for r in demo.server.requests)


def test_retries_are_counted(demo: Demo, tmp_path: Path) -> None:
    demo.server.inject_fault(Fault(r"^/api/v1/nodes$", method="GET", status=503, times=2))
    metrics = tmp_path / "m.prom"
    code, _out, err = run_cli(
        [
            "diff",
            "--repo",
            demo.repo,
            "--cluster",
            "prod-addon",
            "--kubeconfig",
            demo.kubeconfig,
            "--metrics-file",
            metrics,
        ],
        env={"KAI_GITOPS_KUBE_BACKOFF_BASE_S": "0.01"},
    )
    assert code == 2, err
    assert value(samples(metrics.read_text()), "kai_gitops_live_read_retries", cluster="prod-addon") == 2


def test_pushgateway_grouping_auth_and_last_success_kept_after_a_failure(demo: Demo) -> None:
    env = {"KAI_GITOPS_PUSHGATEWAY_USERNAME": "pusher", "KAI_GITOPS_PUSHGATEWAY_PASSWORD": "pw-s3cret"}
    with PushgatewayStandin(credentials=("pusher", "pw-s3cret")) as gateway:
        args = [
            "diff",
            "--repo",
            demo.repo,
            "--cluster",
            "prod-addon",
            "--kubeconfig",
            demo.kubeconfig,
            "--metrics-push",
            gateway.url,
        ]
        code, _out, err = run_cli(args, env=env)
        assert code == 2, err
        good = gateway.pushes[-1]
        assert (good.method, good.path) == ("PUT", "/metrics/job/kai-gitops/cluster/prod-addon")
        assert good.authorization == "Basic cHVzaGVyOnB3LXMzY3JldA=="
        pushed = samples(good.body.decode())
        assert "cluster" not in pushed["kai_gitops_findings"][0][0]  # the grouping key carries it
        success = value(pushed, "kai_gitops_last_success_timestamp_seconds", command="diff")

        demo.server.inject_fault(Fault(r"^/api/v1/nodes$", method="GET", status=403))
        code, _out, err = run_cli(args, env=env)
        assert code == 1
        failed = gateway.pushes[-1]
        assert failed.method == "POST"  # replaces only what it sends: the last success stays
        assert "kai_gitops_last_success_timestamp_seconds" not in samples(failed.body.decode())
        group = gateway.families({"job": "kai-gitops", "cluster": "prod-addon"})
        assert group["kai_gitops_last_success_timestamp_seconds"].samples[0].value == success
        assert group["kai_gitops_last_run_success"].samples[0].value == 0
        assert "pw-s3cret" not in err


def test_pushgateway_rejection_is_one_warning_not_a_failed_run(demo: Demo) -> None:
    with PushgatewayStandin(credentials=("pusher", "right")) as gateway:
        code, _out, err = run_cli(
            [
                "diff",
                "--repo",
                demo.repo,
                "--cluster",
                "prod-addon",
                "--kubeconfig",
                demo.kubeconfig,
                "--metrics-push",
                gateway.url,
                "--log-format",
                "text",
            ]
        )
    assert code == 2
    [line] = [line for line in err.splitlines() if "metrics" in line]
    assert line.startswith("kai-gitops: warning: metrics not written:") and "401" in line


def test_textfile_keeps_the_last_success_through_a_failed_run(demo: Demo, tmp_path: Path) -> None:
    metrics = tmp_path / "m.prom"
    args = [
        "diff",
        "--repo",
        demo.repo,
        "--cluster",
        "prod-addon",
        "--kubeconfig",
        demo.kubeconfig,
        "--metrics-file",
        metrics,
    ]
    assert run_cli(args)[0] == 2
    success = value(samples(metrics.read_text()), "kai_gitops_last_success_timestamp_seconds", command="diff")
    demo.server.inject_fault(Fault(r"^/api/v1/nodes$", method="GET", status=403))
    assert run_cli(args)[0] == 1
    found = samples(metrics.read_text())
    assert value(found, "kai_gitops_last_success_timestamp_seconds", command="diff") == success
    assert value(found, "kai_gitops_last_run_success", command="diff") == 0
    assert value(found, "kai_gitops_last_run_exit_code", command="diff") == 1
    assert "kai_gitops_findings" not in found  # no report from a failed read: no finding counts


def test_check_metrics_cover_every_cluster(tmp_path: Path) -> None:
    from tests.support.helpers import load_demo_builder

    repo = tmp_path / "repo"
    load_demo_builder().build_repo(repo)
    metrics = tmp_path / "m.prom"
    code, out, err = run_cli(["check", "--repo", repo, "--metrics-file", metrics, "-o", "json"])
    assert code in (0, 2), err
    report = json.loads(out)
    found = samples(metrics.read_text())
    clusters = {labels["cluster"] for labels, _ in found["kai_gitops_drift"]}
    assert clusters == {c["cluster"] for c in report["clusters"]}
    assert value(found, "kai_gitops_last_run_success", cluster="all", command="check") == 1


def test_json_error_line_parses_and_hides_the_planted_secret(tmp_path: Path) -> None:
    code, out, err = run_cli(
        ["diff", "--repo", "https://bot:hunter2-planted@127.0.0.1:9/x.git", "--log-format", "json"],
        env={"KAI_GITOPS_CACHE": str(tmp_path / "cache")},
    )
    assert code == 1 and out == ""
    lines = json_lines(err)
    [error] = [line for line in lines if line["level"] == "error"]
    assert error["event"] == "run-error" and error["runId"]
    assert "hunter2-planted" not in err


_SECRET = st.text(alphabet="abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789", min_size=8, max_size=24)
_PLANTED = st.one_of(
    _SECRET.map(lambda s: ("url", s, f"https://deploy:{s}@git.example.com/repo.git")),
    _SECRET.map(lambda s: ("flag", s, f"--token={s}")),
    _SECRET.map(lambda s: ("flag", s, f"--db-password {s}")),
    _SECRET.map(lambda s: ("pem", s, f"-----BEGIN PRIVATE KEY-----\n{s}\n-----END PRIVATE KEY-----")),
)


@settings(max_examples=150, deadline=None)
@given(planted=_PLANTED, before=st.text(max_size=40), after=st.text(max_size=40))
def test_json_log_lines_parse_and_never_carry_a_planted_secret(
    planted: tuple[str, str, str], before: str, after: str
) -> None:
    _shape, secret, text = planted
    assume(secret not in before + after)
    formatter = JsonFormatter()
    with run_context("abc123def456", "prod"), phase("publish"):
        record = logging.makeLogRecord(
            {
                "name": "kai_gitops.test",
                "levelno": logging.WARNING,
                "levelname": "WARNING",
                "msg": "%s %s %s",
                "args": (before, text, after),
                "url": f"https://u:{secret}@h/x",
                "args_list": ["--password", secret],
            }
        )
        line = formatter.format(record)
    assert "\n" not in line
    parsed = json.loads(line)
    assert (parsed["runId"], parsed["cluster"], parsed["phase"], parsed["level"]) == (
        "abc123def456",
        "prod",
        "publish",
        "warning",
    )
    assert secret not in line


def test_diff_reports_too_and_a_snapshot_cannot(demo: Demo) -> None:
    register_reports(demo.server, WG)
    code, _out, err = run_cli(
        [
            "diff",
            "--repo",
            demo.repo,
            "--cluster",
            "prod-addon",
            "--kubeconfig",
            demo.kubeconfig,
            "--report-to",
            "policyreport",
            "--report-max-results",
            "3",
        ]
    )
    assert code == 2, err
    cpolr = demo.server.get_object(CLUSTER_POLICY_REPORT.api_version, "ClusterPolicyReport", "kai-gitops-prod-addon")
    assert cpolr is not None and len(cpolr["results"]) == 3
    assert cpolr["results"][-1]["policy"] == "kai-gitops-report-truncated"

    code, _out, err = run_cli(
        [
            "diff",
            "--repo",
            demo.repo,
            "--cluster",
            "prod-addon",
            "--snapshot",
            DEMO_SNAPSHOTS / "prod-addon.yaml",
            "--report-to",
            "policyreport",
        ]
    )
    assert code == 1 and "cannot be used with --snapshot" in err.splitlines()[-1]


def test_text_logs_show_the_summary_not_each_object(demo: Demo) -> None:
    register_reports(demo.server, WG)
    code, _out, err = demo.reconcile("--report-to", "policyreport", "--log-format", "text")
    assert code == 2, err
    assert [line for line in err.splitlines() if "policy reports" in line] == [
        "kai-gitops: policy reports (ClusterPolicyReport, PolicyReport): 2 created, 0 updated, 0 unchanged, 0 deleted"
    ]


@pytest.fixture
def not_http() -> Iterator[str]:
    """A TCP port that answers like an SSH server: what a mistyped --metrics-push port reaches."""
    import socket
    import threading

    server = socket.create_server(("127.0.0.1", 0))

    def answer() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n")

    threading.Thread(target=answer, daemon=True).start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}"
    server.close()


@pytest.mark.parametrize("kind", ["not-http", "bad-url"])
def test_a_push_that_cannot_be_made_is_a_user_error_not_a_crash(not_http: str, kind: str) -> None:
    """The run's guard turns a UserError into one warning; anything else (http.client's BadStatusLine, urllib's
    ValueError for a malformed host) would end a finished run as an internal error."""
    from reconciler.core.errors import UserError
    from reconciler.telemetry.metrics import RunFacts, push

    url = not_http if kind == "not-http" else "http://[::1:9091"
    with pytest.raises(UserError, match="metrics"):
        push(url, RunFacts("diff", "prod", 0.0, 1.0, ok=True, exit_code=0), env={})


def test_credentials_in_the_push_url_get_a_clear_hint_not_a_dns_error() -> None:
    from reconciler.core.errors import UserError
    from reconciler.telemetry.metrics import PASSWORD_ENV, RunFacts, push

    with pytest.raises(UserError) as raised:
        push("http://bot:s3cr3t-planted@127.0.0.1:9/", RunFacts("diff", "prod", 0.0, 1.0, ok=True, exit_code=0), env={})
    line = raised.value.line()
    assert "credentials" in line and PASSWORD_ENV in line and "s3cr3t-planted" not in line


def test_pushed_metrics_of_a_multi_cluster_run_add_up_the_clusters() -> None:
    """A push leaves the cluster to the grouping key (`all` for a `check` of every cluster), so the clusters'
    counts must be summed into the group's series: one overwriting the other reported a single cluster's."""
    from prometheus_client import generate_latest

    from reconciler.core.resources import queue_ref
    from reconciler.findings.finding import Finding, Kind, Severity
    from reconciler.report.report import ClusterReport, Report
    from reconciler.telemetry.metrics import RunFacts, build_registry

    def drift(cluster: str, queue: str) -> Finding:
        return Finding("KAI-D-002", Kind.DRIFT, Severity.ERROR, "quota differs", cluster, queue_ref(queue))

    clusters = [
        ClusterReport("a", None, None, None, None, [drift("a", "q1"), drift("a", "q2")]),
        ClusterReport("b", None, None, None, None, [drift("b", "q1")]),
    ]
    facts = RunFacts("check", "all", 0.0, 1.0, ok=True, exit_code=2, report=Report("check", clusters))
    found = samples(generate_latest(build_registry(facts, cluster_label=False)).decode())
    assert value(found, "kai_gitops_findings", rule="KAI-D-002", severity="error", kind="drift") == 3
    assert value(found, "kai_gitops_drift") == 3
    labelled = samples(generate_latest(build_registry(facts)).decode())
    assert value(labelled, "kai_gitops_drift", cluster="a") == 2


def test_unknown_log_format_from_the_environment_is_one_line_not_a_traceback() -> None:
    """`schema` has no --log-format for click to check, so the variable is first read by the run's set-up."""
    from tests.support.helpers import assert_one_line_error

    assert_one_line_error(*run_cli(["schema"], env={"KAI_GITOPS_LOG_FORMAT": "xml"}), "unknown log format 'xml'")
