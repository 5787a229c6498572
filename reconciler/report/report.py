"""What one run found, per cluster: the single object every output format renders."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import cast

from reconciler.checks.nvca import Verdict
from reconciler.core.exits import ExitCode
from reconciler.core.jsonvalue import JSONLike, JSONValue
from reconciler.core.redact import redact_free_text, redact_free_values, redact_text
from reconciler.core.refs import Location
from reconciler.findings.age import format_instant
from reconciler.findings.builtin_rules import BY_ID as BUILTIN_RULES
from reconciler.findings.finding import Action, Finding, Kind, Severity, at_or_above
from reconciler.findings.problems import group_problems, problem_id
from reconciler.findings.rules import RuleMeta, Scope
from reconciler.model.config import RepoConfig
from reconciler.report.shards import Shard

SCHEMA_VERSION = 1
# The cluster name of a run that reads live state only, with nothing naming the cluster (`doctor` without
# --repo, --cluster or --context): a report key, not a cluster anyone called that.
UNNAMED_LIVE = "live"


@dataclass(frozen=True)
class GitInfo:
    repo: str
    ref: str
    commit: str | None
    worktree: bool = False

    @property
    def short_commit(self) -> str:
        return (self.commit or "")[:12] or "working tree"

    def to_dict(self) -> dict[str, JSONLike]:
        return {"repo": self.repo, "ref": self.ref, "commit": self.commit, "worktree": self.worktree}


@dataclass
class ClusterReport:
    cluster: str
    git: GitInfo | None = None
    live_source: str | None = None
    nvca: Verdict | None = None
    healthz: Mapping[str, JSONLike] | None = None
    findings: list[Finding] = field(default_factory=list)
    rules: list[RuleMeta] = field(default_factory=list)  # every rule evaluated here, found something or not
    anchor: Location | None = None  # the cluster's entry in kai-gitops.yaml: where live-only findings point
    # The plan made from these findings (diff, reconcile): create/update/operator, as reconcile's Plan: line counts
    # them. None (check, doctor, a report read back): counted from the drift findings alone.
    plan_counts: Mapping[str, int] | None = None

    @property
    def unnamed_live(self) -> bool:
        """Live state read with nothing naming its cluster (`doctor` without --repo, --cluster, --context):
        `cluster` is then the report key UNNAMED_LIVE, which the formats for people must not show as a name."""
        return self.git is None and self.cluster == UNNAMED_LIVE

    def active(self) -> list[Finding]:
        return [f for f in self.findings if f.waived_by is None]

    def redacted(self) -> ClusterReport:
        """Every text from the cluster or a check masked once more, as each output renders it."""
        nvca = replace(self.nvca, errors=tuple(map(redact_free_text, self.nvca.errors))) if self.nvca else None
        # the healthz mapping is parsed JSON: JSONLike only because the type is read-only
        healthz = (
            {k: redact_free_values(cast(JSONValue, v)) for k, v in self.healthz.items()}
            if self.healthz is not None
            else None
        )
        return replace(
            self,
            live_source=redact_text(self.live_source) if self.live_source else None,
            nvca=nvca,
            healthz=healthz,
            findings=[f.redacted() for f in self.findings],
        )

    def summary(self) -> dict[str, int]:
        active = self.active()
        plan = Counter(f.fix.action.value for f in active if f.kind is Kind.DRIFT and f.fix)
        if self.plan_counts is not None:
            plan = Counter(
                {
                    Action.CREATE.value: self.plan_counts["create"],
                    Action.UPDATE.value: self.plan_counts["update"],
                    Action.NONE.value: self.plan_counts["operator"],
                }
            )
        severities = Counter(f.severity.value for f in active if f.kind is Kind.VIOLATION)
        return {
            "drift": sum(1 for f in active if f.kind is Kind.DRIFT),
            "to_create": plan.get(Action.CREATE.value, 0),
            "to_update": plan.get(Action.UPDATE.value, 0),
            "operator_actions": plan.get(Action.NONE.value, 0),
            "errors": severities.get("error", 0),
            "warnings": severities.get("warning", 0),
            "info": severities.get("info", 0),
            "waived": len(self.findings) - len(active),
            "problems": len(group_problems(active)),
            "findings": len(active),
        }

    def to_dict(self) -> dict[str, JSONLike]:
        return {
            "cluster": self.cluster,
            "git": self.git.to_dict() if self.git else None,
            "live": {"source": self.live_source} if self.live_source else None,
            "nvca": {"kai-scheduler-queues": self.nvca.to_dict()} if self.nvca else None,
            "healthz": self.healthz,
            "findings": finding_dicts(self.findings),
            "summary": self.summary(),
            **({"planCounts": dict(self.plan_counts)} if self.plan_counts is not None else {}),
            # For `report merge`: a merged report renders like one run (SARIF rules, JUnit cases, anchors).
            "rulesEvaluated": sorted(m.id for m in self.rules),
            "anchor": self.anchor.to_dict() if self.anchor else None,
        }


@dataclass
class Report:
    command: str
    clusters: list[ClusterReport]
    fail_on: Severity = Severity.WARNING
    repository: list[Finding] = field(default_factory=list)  # about the change itself, not one cluster
    changed_lines: dict[str, frozenset[int]] | None = None  # with --base: lines the change added or edited
    shard: Shard | None = None  # check --shard: this report covers one shard
    # kai-gitops.yaml as the run read it, for the report targets (gitHost:, kubeContext): never serialised,
    # so a target need not open the repository again (a clone URL would be fetched again).
    config: RepoConfig | None = field(default=None, compare=False, repr=False)
    generated_at: datetime | None = None  # the run's start: what its findings' ages are measured to

    def redacted(self) -> Report:
        """The report as every output format renders it: each text redacted once more (see ClusterReport)."""
        return replace(
            self, clusters=[c.redacted() for c in self.clusters], repository=[f.redacted() for f in self.repository]
        )

    @property
    def exit_code(self) -> ExitCode:
        every = [*self.repository, *(f for c in self.clusters for f in c.findings)]
        return ExitCode.FINDINGS if at_or_above(every, self.fail_on) else ExitCode.CLEAN

    def to_dict(self) -> dict[str, JSONLike]:
        head: dict[str, JSONLike] = {
            "schemaVersion": SCHEMA_VERSION,
            "tool": "kai-gitops",
            "command": self.command,
            "failOn": self.fail_on.value,
            "exitCode": self.exit_code.value,
            "generatedAt": format_instant(self.generated_at) if self.generated_at else None,
        }
        if self.shard is not None:
            head["shard"] = self.shard.to_dict()
        repository: dict[str, JSONLike] = {"repository": {"findings": finding_dicts(self.repository)}}
        catalog: dict[str, JSONLike] = {"rules": [_meta_dict(m) for m in self.rules()]} | (
            {"changedLines": {f: sorted(lines) for f, lines in sorted(self.changed_lines.items())}}
            if self.changed_lines is not None
            else {}
        )
        if self.command in ("diff", "doctor", "reconcile") and len(self.clusters) == 1:
            return head | self.clusters[0].to_dict() | repository | {"summary": self.totals()} | catalog
        return (
            head | repository | {"clusters": [c.to_dict() for c in self.clusters], "summary": self.totals()} | catalog
        )

    def totals(self) -> dict[str, int]:
        """Every cluster's summary plus the findings about the run itself (waivers, policy edits)."""
        totals: Counter[str] = Counter({key: 0 for key in ClusterReport("").summary()})
        for cluster in self.clusters:
            totals.update(cluster.summary())
        totals.update(ClusterReport("", findings=self.repository).summary())
        return dict(totals)

    def rules(self) -> list[RuleMeta]:
        """Every rule that ran (or reported) in this run, by id: the policy pack's, the differ's, the waivers'."""
        found: dict[str, RuleMeta] = {}
        for cluster in self.clusters:
            found.update((m.id, m) for m in cluster.rules)
        every = [*self.repository, *(f for c in self.clusters for f in c.findings)]
        for f in sorted(every, key=finding_order):  # the order JSON keeps: a re-read report names them alike
            if f.rule_id not in found:
                found[f.rule_id] = BUILTIN_RULES.get(f.rule_id) or _meta_from(f)
        return [found[key] for key in sorted(found)]


def finding_dicts(findings: list[Finding]) -> list[dict[str, JSONLike]]:
    """JSON findings in report order, each with the id of the problem it belongs to."""
    return [f.to_dict() | {"problem": problem_id(f)} for f in sorted(findings, key=finding_order)]


def _meta_dict(meta: RuleMeta) -> dict[str, str]:
    return {
        "id": meta.id,
        "title": meta.title,
        "severity": meta.severity.value,
        "scope": meta.scope.value,
        "rationale": meta.rationale,
        "remediation": meta.remediation,
        "source": meta.source,
    }


def _meta_from(f: Finding) -> RuleMeta:
    """A rule known only by its findings (e.g. from a merged report): described by what they say."""
    description = f.fix.description if f.fix else ""
    return RuleMeta(
        f.rule_id,
        f.title or f.rule_id,
        f.severity,
        Scope.STATIC,
        f.title or f.message,
        description or "See the finding.",
        "kai-gitops",
    )


def finding_order(f: Finding) -> tuple[bool, int, str, str, str]:
    return (f.kind is not Kind.DRIFT, -f.severity.rank, f.rule_id, str(f.subject or ""), str(f.location or ""))
