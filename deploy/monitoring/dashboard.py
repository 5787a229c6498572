"""The kai-gitops Grafana dashboard, built with grafana-foundation-sdk (Grafana's own typed builders).

    python deploy/monitoring/dashboard.py            # rewrites grafana-dashboard.json beside this file

The JSON is committed so that operators import it without Python; tests/deploy/test_monitoring.py holds it equal
to this script's output and every query to the metrics kai-gitops writes (docs/observability.md#metrics).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from grafana_foundation_sdk.builders import prometheus, stat, table, timeseries
from grafana_foundation_sdk.builders.dashboard import Dashboard, DatasourceVariable, QueryVariable, Row
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import DataSourceRef, VariableRefresh
from grafana_foundation_sdk.models.prometheus import PromQueryFormat

OUTPUT = Path(__file__).with_name("grafana-dashboard.json")
DATASOURCE = DataSourceRef(type_val="prometheus", uid="${datasource}")
CLUSTERS = 'cluster=~"$cluster"'
FINDINGS_TABLE = f"sum by (cluster, rule, severity, kind) (kai_gitops_findings{{{CLUSTERS}}})"


def query(expr: str, legend: str) -> prometheus.Dataquery:
    return prometheus.Dataquery().expr(expr).legend_format(legend).datasource(DATASOURCE)


def over_time(title: str, description: str, expr: str, legend: str, unit: str = "short") -> timeseries.Panel:
    return (timeseries.Panel().title(title).description(description).datasource(DATASOURCE)
            .with_target(query(expr, legend)).unit(unit).min(0).span(12).height(8))


def now(title: str, description: str, expr: str, legend: str, unit: str = "short") -> stat.Panel:
    return (stat.Panel().title(title).description(description).datasource(DATASOURCE)
            .with_target(query(expr, legend).instant()).unit(unit).span(6).height(6))


def drift_and_findings(dashboard: Dashboard) -> Dashboard:
    return (dashboard.with_row(Row("Drift and findings"))
            .with_panel(now("Objects drifted from Git", "kai_gitops_drift: objects whose live state differs from "
                            "Git in each cluster's last run.",
                            f"sum by (cluster) (kai_gitops_drift{{{CLUSTERS}}})", "{{cluster}}"))
            .with_panel(now("Oldest drift", "How long the oldest drift still present was first seen ago.",
                            f"max by (cluster) (kai_gitops_oldest_drift_age_seconds{{{CLUSTERS}}})", "{{cluster}}",
                            unit="s"))
            .with_panel(now("Findings by severity", "Findings of the last runs that no waiver covers.",
                            f"sum by (severity) (kai_gitops_findings{{{CLUSTERS}}})", "{{severity}}"))
            .with_panel(now("Waived findings", "Findings covered by a waiver.",
                            f"sum(kai_gitops_findings_waived{{{CLUSTERS}}})", "waived"))
            .with_panel(over_time("Drift per cluster", "kai_gitops_drift over time: a step up is new drift, a "
                                  "step down drift fixed (by reconcile --apply or by hand).",
                                  f"sum by (cluster) (kai_gitops_drift{{{CLUSTERS}}})", "{{cluster}}"))
            .with_panel(over_time("Findings per cluster and rule", "kai_gitops_findings by cluster and rule id.",
                                  f"sum by (cluster, rule) (kai_gitops_findings{{{CLUSTERS}}})",
                                  "{{cluster}} {{rule}}"))
            .with_panel(table.Panel().title("Findings now, per cluster and rule")
                        .description("The last run's findings: one row per cluster, rule, severity and kind.")
                        .datasource(DATASOURCE).span(24).height(8)
                        .with_target(query(FINDINGS_TABLE, "").instant().format(PromQueryFormat.TABLE))))


def runs(dashboard: Dashboard) -> Dashboard:
    return (dashboard.with_row(Row("Runs"))
            .with_panel(now("Since the last successful run", "Time since a run last ended without an error; "
                            "KaiGitopsNoSuccessfulRun fires at twice the schedule.",
                            f"time() - max by (cluster) (kai_gitops_last_success_timestamp_seconds{{{CLUSTERS}}})",
                            "{{cluster}}", unit="s"))
            .with_panel(now("Last run succeeded", "1 when the last run ended without an error (findings are not "
                            "errors), 0 when it failed.",
                            f"min by (cluster) (kai_gitops_last_run_success{{{CLUSTERS}}})", "{{cluster}}"))
            .with_panel(now("Last exit code", "0 clean, 2 findings or pending changes, 1 error.",
                            f"max by (cluster, command) (kai_gitops_last_run_exit_code{{{CLUSTERS}}})",
                            "{{cluster}} {{command}}"))
            .with_panel(now("API retries in the last run", "Kubernetes API requests retried (429, 5xx, timeouts).",
                            f"sum by (cluster) (kai_gitops_live_read_retries{{{CLUSTERS}}})", "{{cluster}}"))
            .with_panel(over_time("Run duration", "Wall time of each cluster's last run, per command.",
                                  f"max by (cluster, command) (kai_gitops_run_duration_seconds{{{CLUSTERS}}})",
                                  "{{cluster}} {{command}}", unit="s"))
            .with_panel(over_time("Last success", "When each cluster's last successful run finished.",
                                  f"max by (cluster) (kai_gitops_last_success_timestamp_seconds{{{CLUSTERS}}}) * 1000",
                                  "{{cluster}}", unit="dateTimeAsIso")))


def changes(dashboard: Dashboard) -> Dashboard:
    return (dashboard.with_row(Row("Changes (reconcile)"))
            .with_panel(over_time("Changes applied", "What reconcile --apply applied in each run (0 without "
                                  "--apply).", f"sum by (cluster) (kai_gitops_changes_applied{{{CLUSTERS}}})",
                                  "{{cluster}} applied"))
            .with_panel(over_time("Changes planned and failed", "The plan's changes (what kai-gitops may fix) and "
                                  "the ones --apply could not apply (KaiGitopsApplyFailed).",
                                  f"sum by (cluster) (kai_gitops_changes_planned{{{CLUSTERS}}})", "{{cluster}} planned")
                        .with_target(query(f"sum by (cluster) (kai_gitops_changes_failed{{{CLUSTERS}}})",
                                           "{{cluster}} failed"))))


def build() -> Dashboard:
    clusters = (QueryVariable("cluster").label("Cluster").datasource(DATASOURCE)
                .query("label_values(kai_gitops_last_run_timestamp_seconds, cluster)")
                .multi(True).include_all(True).all_value(".*").refresh(VariableRefresh.ON_TIME_RANGE_CHANGED))
    dashboard = (Dashboard("kai-gitops").uid("kai-gitops").tags(["kai-gitops", "kai-scheduler", "nvca"])
                 .description("Drift, findings, runs and changes of kai-gitops, from the metrics each run pushes "
                              "(docs/monitoring.md).")
                 .time("now-7d", "now").refresh("5m").timezone("browser")
                 .with_variable(DatasourceVariable("datasource").label("Data source").type("prometheus"))
                 .with_variable(clusters))
    return changes(runs(drift_and_findings(dashboard)))


def render() -> str:
    return json.dumps(build().build(), cls=JSONEncoder, indent=2, sort_keys=True) + "\n"


def main() -> int:
    OUTPUT.write_text(render())
    print(f"wrote {OUTPUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
