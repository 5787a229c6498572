"""One cluster evaluated, for every command: the checks of the catalogue that apply, the policies, who set each
drifted field, the checks that read those, each drift's last write, and the waivers.

`diff`, `doctor`, `check` and `reconcile` differ only in the `ClusterContext` they build (what they read) and
the facts they hand the policies; what runs, and which rules a report says ran, follows from the context
(checks/catalogue.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import TYPE_CHECKING

from reconciler.app.last_writes import audit_cut_off, identities_of_run, with_last_writes
from reconciler.app.policy_run import evaluate, repo_waivers
from reconciler.checks.attribution import attribute
from reconciler.checks.catalogue import ClusterContext, Order, ran_rules, run_checks
from reconciler.checks.facts import Facts
from reconciler.checks.policy.waivers import apply_waivers, waiver_findings
from reconciler.findings.finding import Finding
from reconciler.findings.rules import RuleMeta
from reconciler.model.config import AuditIdentities

if TYPE_CHECKING:
    from reconciler.app.settings import DesiredRepo, RunSettings
    from reconciler.model.desired import DesiredCluster


@dataclass(frozen=True)
class Evaluated:
    findings: list[Finding]  # waivers applied
    rules: list[RuleMeta]  # every rule evaluated, found something or not


def evaluate_cluster(
    context: ClusterContext,
    facts: Facts,
    repo: DesiredRepo | None,
    settings: RunSettings,
    policy_rules: list[RuleMeta],
    waivers: Waiving,
    started: datetime,
) -> Evaluated:
    """`policy_rules`: the rules the policy engine runs in this command's scope (read once per run)."""
    findings = run_checks(context, Order.BEFORE_POLICIES)
    findings += evaluate_policies(facts, context.desired, repo, settings)
    findings += run_checks(context, Order.AFTER_POLICIES)
    live = context.live
    if live is not None and context.cluster_read:
        findings = attribute(findings, live, context.desired.shared if context.desired else None)
    findings += run_checks(replace(context, earlier=tuple(findings)), Order.AFTER_ATTRIBUTION)
    if live is not None and context.cluster_read:
        identities = identities_of_run(repo.config.audit_identities if repo else AuditIdentities(), live)
        findings = with_last_writes(findings, settings.k8s_audit_logs, identities, audit_cut_off(live, started))
    return Evaluated(waivers.apply(findings, context.name), [*ran_rules(context), *policy_rules])


def evaluate_policies(
    facts: Facts, desired: DesiredCluster | None, repo: DesiredRepo | None, settings: RunSettings
) -> list[Finding]:
    return evaluate(facts, desired, repo, settings)


class Waiving:
    """The repo's waivers over one run: read once, applied per cluster, judged (expired, unused) once."""

    def __init__(self, repo: DesiredRepo | None, clusters: list[str]) -> None:
        self.waivers = repo_waivers(repo)
        self.clusters, self.used, self.today = clusters, set[int](), date.today()

    def apply(self, findings: list[Finding], cluster: str) -> list[Finding]:
        if not self.waivers:
            return findings
        waived, matched = apply_waivers(findings, self.waivers, self.today, cluster=cluster)
        self.used |= matched
        return waived

    def leftovers(self) -> list[Finding]:
        return waiver_findings(self.waivers, self.used, self.today, clusters=self.clusters)
