"""A fleet's report as one Markdown table: a row per cluster, a column per rule that found something.

What a hub's fleet summary shows at a glance (`kai-gitops report matrix`, deploy/helm mode fleet): which rule
fires where. A cell counts the cluster's findings of that rule, waived ones apart (`2 (+1 waived)`); a column
header names the rule and its severity. Clusters keep the report's order (kai-gitops.yaml's), rules are sorted
by severity, worst first, then by id.

Cluster names and rule ids are shown literally: a `diff`/`doctor` report names a kube context, which may hold
`<`, `*` or a backtick, and a custom policy names its own rules; both reach `fleet-matrix.md` as escaped text.
"""

from __future__ import annotations

from collections import Counter

from reconciler.findings.finding import Severity
from reconciler.outputs.markdown_format import escape_markdown
from reconciler.report.report import Report

_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


def matrix_markdown(report: Report) -> str:
    """The cluster × rule table of `report`, a line saying so when nothing was found."""
    open_counts: dict[str, Counter[str]] = {}
    waived_counts: dict[str, Counter[str]] = {}
    severity: dict[str, Severity] = {}
    for cluster in report.clusters:
        open_counts[cluster.cluster], waived_counts[cluster.cluster] = Counter(), Counter()
        for finding in cluster.findings:
            counts = waived_counts if finding.waived_by is not None else open_counts
            counts[cluster.cluster][finding.rule_id] += 1
            worst = severity.get(finding.rule_id, finding.severity)
            severity[finding.rule_id] = min(worst, finding.severity, key=_ORDER.__getitem__)
    rules = sorted(severity, key=lambda rule: (_ORDER[severity[rule]], rule))
    if not rules:
        return f"No findings in {len(report.clusters)} cluster(s).\n"
    header = "| cluster | open | " + " | ".join(f"{escape_markdown(rule)} ({severity[rule]})" for rule in rules) + " |"
    lines = [header, "|---|---|" + "---|" * len(rules)]
    for cluster in report.clusters:
        name = cluster.cluster
        cells = [_cell(open_counts[name][rule], waived_counts[name][rule]) for rule in rules]
        lines.append(f"| {escape_markdown(name)} | {sum(open_counts[name].values())} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(open_count: int, waived: int) -> str:
    if not open_count and not waived:
        return ""
    return f"{open_count}" + (f" (+{waived} waived)" if waived else "")
