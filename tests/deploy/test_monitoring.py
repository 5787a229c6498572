"""deploy/monitoring/: the PrometheusRule (promtool's own check and unit tests), the Grafana dashboard (the
committed JSON is its generator's output) and the Policy Reporter values; every metric they query is one the
tool emits, every runbook link lands on a section of docs/monitoring.md."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.helpers import ROOT

MONITORING = ROOT / "deploy" / "monitoring"
RULES = MONITORING / "prometheus-rules.yaml"
RULE_TESTS = MONITORING / "prometheus-rules-test.yaml"
DOCS = ROOT / "docs" / "monitoring.md"
OLDEST_DRIFT_AGE = "kai_gitops_oldest_drift_age_seconds"
_METRIC = re.compile(r"\b(kai_gitops_[a-z_]+)(?:\{([^}]*)\})?")


def emitted_metrics() -> dict[str, set[str]]:
    """Every metric a run can write, with its labels: a reconcile --apply run with findings of each kind,
    rendered by the metrics module itself (textfile form, cluster label on)."""
    from prometheus_client import generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    from reconciler.core.resources import queue_ref
    from reconciler.findings.finding import Finding, Kind, Severity
    from reconciler.report.report import ClusterReport, Report
    from reconciler.telemetry.metrics import RunFacts, build_registry

    finding = Finding("KAI-D-002", Kind.DRIFT, Severity.ERROR, "quota differs", "lab", queue_ref("q"))
    report = Report("reconcile", [ClusterReport("lab", None, None, None, None, [finding])])
    facts = RunFacts(
        "reconcile",
        "lab",
        0.0,
        1.0,
        ok=True,
        exit_code=2,
        report=report,
        changes_planned=1,
        changes_applied=1,
        changes_failed=0,
    )
    found: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(generate_latest(build_registry(facts)).decode()):
        for sample in family.samples:
            found.setdefault(sample.name, set()).update(sample.labels)
    found.setdefault("kai_gitops_findings_waived", {"cluster", "rule"})  # only with a waiver: as documented
    return found


def queried_metrics(query: str) -> list[tuple[str, set[str]]]:
    """(metric, label names matched on it) for every kai-gitops metric a PromQL expression names."""
    return [
        (name, {m.split("=")[0].strip().rstrip("!~") for m in (matchers or "").split(",") if m.strip()})
        for name, matchers in _METRIC.findall(query)
    ]


def assert_metrics_exist(queries: list[str]) -> None:
    metrics = emitted_metrics()
    assert metrics[OLDEST_DRIFT_AGE] >= {"cluster"}
    used = [pair for query in queries for pair in queried_metrics(query)]
    assert used
    for name, labels in used:
        assert name in metrics, f"{name} is not a metric kai-gitops writes ({sorted(metrics)})"
        assert labels <= metrics[name] | {"job", "instance"}, (name, labels - metrics[name])


def test_the_metric_check_rejects_a_misspelt_metric_or_label() -> None:
    with pytest.raises(AssertionError):
        assert_metrics_exist(["kai_gitops_drifts > 0"])
    with pytest.raises(AssertionError):
        assert_metrics_exist(['kai_gitops_findings{rules="KAI-D-002"}'])
    assert queried_metrics('sum by (cluster) (kai_gitops_findings{rule=~"A|B", kind!="x"})') == [
        ("kai_gitops_findings", {"rule", "kind"})
    ]


# -- the PrometheusRule -----------------------------------------------------------------------------------


def rule_object() -> dict[str, Any]:
    return yaml.safe_load(RULES.read_text())


def alerts() -> list[dict[str, Any]]:
    return [rule for group in rule_object()["spec"]["groups"] for rule in group["rules"] if "alert" in rule]


def promtool() -> Path:
    from tests.support.tools import require_tool

    return require_tool("promtool")


@pytest.fixture
def rule_dir(tmp_path: Path) -> Path:
    """The rule groups of the PrometheusRule's spec, as promtool reads them, beside a copy of the unit tests."""
    (tmp_path / "prometheus-rules.groups.yaml").write_text(yaml.safe_dump(rule_object()["spec"]))
    shutil.copy(RULE_TESTS, tmp_path / RULE_TESTS.name)
    return tmp_path


def test_the_prometheus_rule_names_the_alerts_the_issue_asks_for() -> None:
    rule = rule_object()
    assert (rule["apiVersion"], rule["kind"]) == ("monitoring.coreos.com/v1", "PrometheusRule")
    assert {a["alert"] for a in alerts()} == {
        "KaiGitopsDriftPersists",
        "KaiGitopsDriftOlderThanADay",
        "KaiGitopsNoSuccessfulRun",
        "KaiGitopsNeverSucceeded",
        "KaiGitopsApplyFailed",
        "KaiGitopsNvcaPredictedUnhealthy",
        "KaiGitopsControllerFight",
    }
    for alert in alerts():
        assert alert["labels"]["severity"] in {"warning", "critical"}
        assert {"summary", "description", "runbook_url"} <= set(alert["annotations"])


def test_promtool_check_rules_passes(rule_dir: Path) -> None:
    done = subprocess.run(
        [str(promtool()), "check", "rules", str(rule_dir / "prometheus-rules.groups.yaml")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"SUCCESS: {len(alerts())} rules found" in done.stdout


def test_promtool_unit_tests_pass(rule_dir: Path) -> None:
    done = subprocess.run(
        [str(promtool()), "test", "rules", RULE_TESTS.name], cwd=rule_dir, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS" in done.stdout


def test_promtool_unit_tests_fail_on_a_changed_threshold(rule_dir: Path) -> None:
    """The unit tests pin the rules: the 'older than a day' threshold moved by an hour fails them."""
    groups = rule_dir / "prometheus-rules.groups.yaml"
    groups.write_text(groups.read_text().replace("> 86400", "> 90000"))
    done = subprocess.run(
        [str(promtool()), "test", "rules", RULE_TESTS.name], cwd=rule_dir, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0 and "KaiGitopsDriftOlderThanADay" in done.stdout + done.stderr


def test_every_alert_has_a_firing_and_a_quiet_unit_test() -> None:
    cases = [case for test in yaml.safe_load(RULE_TESTS.read_text())["tests"] for case in test["alert_rule_test"]]
    for alert in alerts():
        mine = [case for case in cases if case["alertname"] == alert["alert"]]
        assert any(case["exp_alerts"] for case in mine), f"{alert['alert']} is never tested firing"
        assert any(not case["exp_alerts"] for case in mine), f"{alert['alert']} is never tested quiet"


def test_every_alert_queries_metrics_the_tool_writes() -> None:
    assert_metrics_exist([alert["expr"] for alert in alerts()])
    assert any(OLDEST_DRIFT_AGE in alert["expr"] for alert in alerts())


def doc_anchors() -> set[str]:
    """The anchors MkDocs' toc (and GitHub) give the page's headings: lowercase, spaces to '-', punctuation
    dropped."""
    headings = re.findall(r"^#+ (.+)$", DOCS.read_text(), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in headings}


def test_every_runbook_link_lands_on_its_alerts_section_of_the_docs() -> None:
    from tests.support.deploy_ci_templates import PLACEHOLDER, release_ref

    anchors = doc_anchors()
    for alert in alerts():
        url = alert["annotations"]["runbook_url"]
        assert url == f"{PLACEHOLDER}/blob/{release_ref()}/docs/monitoring.md#{alert['alert'].lower()}"
        assert alert["alert"].lower() in anchors, f"docs/monitoring.md has no section {alert['alert']}"
        section = DOCS.read_text().split(f"### {alert['alert']}\n")[1].split("\n### ")[0]
        assert "What it means" in section and "What to do" in section, alert["alert"]


# -- the Grafana dashboard ----------------------------------------------------------------------------------

DASHBOARD = MONITORING / "grafana-dashboard.json"


def dashboard_generator() -> Any:
    from tests.support.helpers import _load_path

    return _load_path("kai_gitops_dashboard", MONITORING / "dashboard.py")


def dashboard() -> dict[str, Any]:
    import json

    return json.loads(DASHBOARD.read_text())


def test_the_committed_dashboard_is_the_generators_output() -> None:
    """Edit deploy/monitoring/dashboard.py, then run it: the JSON is never edited by hand."""
    assert DASHBOARD.read_text() == dashboard_generator().render(), "run python deploy/monitoring/dashboard.py"


def test_the_dashboard_has_the_panels_operators_asked_for() -> None:
    panels = {p["title"]: p for p in dashboard()["panels"]}
    asked = {
        "Drift per cluster": "kai_gitops_drift",
        "Findings per cluster and rule": "kai_gitops_findings",
        "Run duration": "kai_gitops_run_duration_seconds",
        "Last success": "kai_gitops_last_success_timestamp_seconds",
        "Changes applied": "kai_gitops_changes_applied",
    }
    for title, metric in asked.items():
        assert metric in panels[title]["targets"][0]["expr"], title
    by_rule = panels["Findings per cluster and rule"]["targets"][0]
    assert "by (cluster, rule)" in by_rule["expr"] and by_rule["legendFormat"] == "{{cluster}} {{rule}}"
    assert {p["type"] for p in panels.values()} <= {"row", "stat", "timeseries", "table"}


def test_every_dashboard_query_names_metrics_the_tool_writes() -> None:
    queries = [t["expr"] for p in dashboard()["panels"] for t in p.get("targets", [])]
    assert_metrics_exist(queries)
    variables = {v["name"]: v for v in dashboard()["templating"]["list"]}
    assert_metrics_exist([variables["cluster"]["query"]])
    # every panel follows the data source and cluster pickers
    assert all('cluster=~"$cluster"' in q for q in queries)
    assert all(t["datasource"]["uid"] == "${datasource}" for p in dashboard()["panels"] for t in p.get("targets", []))


# -- Policy Reporter ----------------------------------------------------------------------------------------

POLICY_REPORTER = MONITORING / "policy-reporter-values.yaml"
# The keys of target.slack and target.teams in the policy-reporter chart's values.yaml (chart 3.9.1,
# kyverno/policy-reporter charts/policy-reporter/values.yaml), read by hand: a misspelt key would be ignored
# by the chart without a word.
_TARGET_KEYS = {
    "webhook",
    "channel",
    "certificate",
    "skipTLS",
    "headers",
    "secretRef",
    "mountedSecret",
    "minimumSeverity",
    "sources",
    "skipExistingOnStartup",
    "customFields",
    "filter",
    "channels",
}
_SEVERITIES = ["info", "low", "medium", "high", "critical"]


def test_policy_reporter_sends_kai_gitops_results_to_slack_and_teams_with_webhooks_from_secrets() -> None:
    from reconciler.publish.policyreport.build import SOURCE

    targets = yaml.safe_load(POLICY_REPORTER.read_text())["target"]
    assert set(targets) == {"slack", "teams"}
    for name, target in targets.items():
        assert set(target) <= _TARGET_KEYS, (name, set(target) - _TARGET_KEYS)
        assert target["sources"] == [SOURCE], name
        assert target["secretRef"] and "webhook" not in target, name  # the URL is a credential
        assert target["minimumSeverity"] in _SEVERITIES, name
        assert f"secret generic {target['secretRef']} --from-literal=webhook=" in POLICY_REPORTER.read_text()
    assert "https://" not in POLICY_REPORTER.read_text()


def test_the_severities_policy_reporter_filters_on_are_the_ones_kai_gitops_writes() -> None:
    from reconciler.findings.finding import Severity
    from reconciler.publish.policyreport.build import _SEVERITY

    assert set(_SEVERITY.values()) <= set(_SEVERITIES)
    targets = yaml.safe_load(POLICY_REPORTER.read_text())["target"]
    slack, teams = (targets[t]["minimumSeverity"] for t in ("slack", "teams"))
    assert slack == _SEVERITY[Severity.WARNING] and teams == _SEVERITY[Severity.ERROR]
