"""Rollout waves in a self-heal run: read the commit statuses, ask the wave decision (checks/waves.py) whether
this cluster may apply the commit, and after the apply write the cluster's own report.

The report, context `kai-gitops/apply/<cluster>` on the commit: `success` only when the apply went through
and, read again after it, the KAI operator has no error finding (KAI-O-*) and NVCA's `kai-scheduler-queues`
check is predicted healthy; else `failure`, which halts every later wave. Reads fail closed: a status read
that fails after the host client's retries means nothing is applied, and the plan says why.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace

from reconciler.checks.waves import WaveDecision, decide, standings, unreadable
from reconciler.core.errors import UserError
from reconciler.core.redact import redact_text
from reconciler.findings.finding import Severity
from reconciler.githost import open_host, resolve_host_settings
from reconciler.githost.remote import remote_url
from reconciler.model.rollout import CommitStatus, RolloutConfig, apply_context
from reconciler.plans.plan import Plan
from reconciler.reconcile.outcome import ReconcileOutcome
from reconciler.reconcile.settings import RolloutSettings, StatusBoard
from reconciler.report.report import Report
from reconciler.sources.git import first_parent_files, known_descendants
from reconciler.sources.repoconfig import CONFIG_FILE, parse_repo_config

log = logging.getLogger("kai_gitops.rollout")
OPERATOR_RULES = "KAI-O-"


@dataclass(frozen=True)
class Gate:
    """One run's wave decision and what it needs to report after the apply."""

    decision: WaveDecision
    cluster: str = ""
    commit: str = ""
    board: StatusBoard | None = None
    own: str | None = None  # this cluster's standing on the commit as read: success | failure

    @property
    def note(self) -> str:
        return f"rollout: {self.decision.reason}"


def gate(report: Report, settings: RolloutSettings) -> Gate | None:
    """None when no rollout is in force (or the run is not of one cluster at a commit); else the decision,
    fail-closed on any read error. The rollout in force is the commit's parent's (`in_force`). The statuses
    read are the commit's and those of the commits the repository's branches know to descend from it (a
    cluster that reads an older commit than the branch tip counts the earlier waves' reports on the newer one)."""
    config, clusters = report.config, report.clusters
    if config is None or len(clusters) != 1 or clusters[0].git is None:
        return None
    cluster, commit = clusters[0].cluster, clusters[0].git.commit
    if settings.ignore_waves:  # before anything is read: the way out when a read keeps failing
        log.warning(
            "--ignore-waves: applying %s on %s whatever the rollout waves say",
            commit[:12] if commit and not clusters[0].git.worktree else "the working tree",
            cluster,
        )
        decision = WaveDecision(True, "override", "--ignore-waves given: the rollout waves are not consulted")
        return Gate(decision, cluster, commit or "")
    if commit is None or clusters[0].git.worktree:
        if config.rollout is None:
            return None
        return Gate(
            WaveDecision(
                False, "unreadable", "the working tree is no commit: waves need a committed revision to report on"
            ),
            cluster,
        )
    try:
        waves = in_force(config.rollout, commit, cluster, settings)
    except Exception as exc:  # fail closed: whatever broke the read, nothing is applied
        return Gate(
            unreadable(_why(exc), "the rollout in force (the parent commit's kai-gitops.yaml)"), cluster, commit
        )
    if waves is None:
        return None
    try:
        board = settings.board(report) if settings.board else _host_board(report, settings)
        later = settings.descendants(commit) if settings.descendants else known_descendants(settings.repo, commit)
        lineage = frozenset({commit, *later})
        statuses: Sequence[CommitStatus] = [s for sha in (commit, *later) for s in board.commit_statuses(sha)]
    except Exception as exc:  # fail closed, as above (a proxy's HTML page, a libgit2 error)
        return Gate(unreadable(_why(exc)), cluster, commit)
    own = standings(statuses, lineage, commit).get(cluster)
    return Gate(
        decide(waves, cluster, commit, lineage, statuses, settings.clock()),
        cluster,
        commit,
        board,
        own.state if own is not None else None,
    )


def in_force(own: RolloutConfig | None, commit: str, cluster: str, settings: RolloutSettings) -> RolloutConfig | None:
    """The waves that gate `commit`: its parent's, so that no commit releases itself (a commit that drops the
    rollout, or labels a cluster kai-gitops/override, is rolled out under the waves before it; the change takes
    effect from the next commit). A parent without a rollout, or no parent here, leaves the commit's own. A
    cluster the parent's rollout does not know joins its last wave."""
    before = settings.rollout_before(commit) if settings.rollout_before else _parent_rollout(settings.repo, commit)
    if before is None:
        return own
    if own != before:
        log.info(
            "rollout: %s changes the rollout; it is rolled out under its parent's, its own takes effect from "
            "the next commit",
            commit[:12],
        )
    return before.joining(cluster)


# First-parent ancestors read for the rollout in force before the read gives up (and the gate fails closed).
ANCESTORS = 50


def _parent_rollout(repo: str | None, commit: str) -> RolloutConfig | None:
    """The rollout of the nearest first-parent ancestor whose kai-gitops.yaml reads: a commit whose file does not
    parse was never applied anywhere (every command stops on it), so it gates nothing and is passed over. Past
    ANCESTORS such commits the rollout in force is unknown: an error, which holds the commit."""
    passed_over = 0
    for ancestor, raw in first_parent_files(repo, commit, CONFIG_FILE, ANCESTORS):
        if raw is None:
            return None
        try:
            return parse_repo_config(raw, f"{CONFIG_FILE}@{ancestor[:12]}").rollout
        except UserError as exc:
            passed_over += 1
            log.warning("rollout: %s is passed over for the rollout in force: %s", ancestor[:12], exc.line())
    if passed_over == ANCESTORS:
        raise UserError(
            f"none of the {ANCESTORS} first-parent commits before {commit[:12]} has a {CONFIG_FILE} that reads",
            hint="commit a valid one, or apply this commit once with --ignore-waves",
        )
    return None


def _why(exc: Exception) -> str:
    return exc.line() if isinstance(exc, UserError) else f"{type(exc).__name__}: {redact_text(str(exc))[:200]}"


def _host_board(report: Report, settings: RolloutSettings) -> StatusBoard:
    config = report.config
    host = resolve_host_settings(
        remote_url(settings.repo), config.git_host if config else None, settings.host_flags, os.environ
    )
    return open_host(host)


def held(outcome: ReconcileOutcome, gate_: Gate) -> ReconcileOutcome:
    """The plan shown (and published) with the wave state as a note; nothing applied."""
    return replace(outcome, plan=_noted(outcome.plan, gate_), waves=gate_.decision)


def _noted(plan: Plan, gate_: Gate) -> Plan:
    return replace(plan, notes=(*plan.notes, gate_.note))


def report_apply(outcome: ReconcileOutcome, gate_: Gate) -> ReconcileOutcome:
    """Write the cluster's report on the commit after an apply, unless it stands so already (an hourly run
    re-writing the same report would move nothing and fill the host's list, which GitHub caps at 1,000 per
    commit and context); a write that fails is a warning (the next run writes it again, and until then the
    later waves wait)."""
    if gate_.board is None or not gate_.commit:
        return replace(outcome, waves=gate_.decision)
    healthy, why = health_after_apply(outcome)
    state = "success" if healthy else "failure"
    if gate_.own == state:
        return replace(outcome, waves=gate_.decision)
    try:
        gate_.board.set_commit_status(gate_.commit, apply_context(gate_.cluster), state, why)
    except UserError as exc:
        log.warning(
            "rollout: the %s report on %s was not written (%s); later waves wait until a run writes it",
            state,
            gate_.commit[:12],
            exc.line(),
        )
    return replace(outcome, waves=gate_.decision)


def health_after_apply(outcome: ReconcileOutcome) -> tuple[bool, str]:
    """Apply ok and, read after it, no KAI operator error and NVCA's kai-scheduler-queues check healthy."""
    if outcome.applied is not None and not outcome.applied.ok:
        return False, "apply failed"
    after = outcome.after or outcome.report
    if outcome.applied is not None and outcome.applied.results and outcome.after is None:
        return False, "applied, but the cluster could not be read again"
    cluster = after.clusters[0]
    if cluster.nvca is not None and cluster.nvca.evaluated and not cluster.nvca.healthy:
        return False, "NVCA kai-scheduler-queues unhealthy: " + (cluster.nvca.errors[0] if cluster.nvca.errors else "")
    broken = [f for f in cluster.active() if f.rule_id.startswith(OPERATOR_RULES) and f.severity == Severity.ERROR]
    if broken:
        return False, f"KAI operator unhealthy: {broken[0].rule_id} {broken[0].message}"
    return True, "applied; KAI operator and NVCA kai-scheduler-queues healthy"
