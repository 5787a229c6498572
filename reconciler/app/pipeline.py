"""One run, end to end: read sources, build models, run checks, collect findings into a report.

Nothing here formats output or exits: the CLI does that with the report this returns.
"""

from __future__ import annotations

import contextvars
import logging
import os
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from functools import wraps
from typing import TYPE_CHECKING, NamedTuple, ParamSpec, TypeVar

from reconciler.app.evaluate import Waiving, evaluate_cluster
from reconciler.app.history import RunHistory
from reconciler.app.policy_run import evaluated_rules
from reconciler.app.settings import DesiredRepo, GitSettings, RunSettings
from reconciler.checks.catalogue import ClusterContext
from reconciler.checks.facts import Facts, add_snapshot_queues, build_facts
from reconciler.checks.nvca import Verdict, gate_enabled, predict
from reconciler.checks.ownership import OwnWrite, controllers
from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONLike
from reconciler.core.refs import Location
from reconciler.core.show import truncate_text
from reconciler.findings.finding import Finding
from reconciler.findings.rules import Scope
from reconciler.model.config import ClusterConfig, RepoConfig
from reconciler.model.desired import DesiredCluster, build_desired
from reconciler.model.live import LiveState
from reconciler.model.queues import SnapshotQueues
from reconciler.model.workloads import RenderedWorkload
from reconciler.reconcile import rollout
from reconciler.reconcile.planner import build_plan
from reconciler.report.report import UNNAMED_LIVE, ClusterReport, GitInfo, Report
from reconciler.report.shards import Shard
from reconciler.report.shards import select as select_shard
from reconciler.sources.git import GitTree, open_tree
from reconciler.sources.git_changes import changed_lines
from reconciler.sources.repoconfig import CONFIG_FILE, parse_repo_config
from reconciler.telemetry.logs import phase, set_cluster

if TYPE_CHECKING:
    from reconciler.plans.plan import ClusterIdentity, Plan
    from reconciler.reconcile.cluster import ClusterTarget
    from reconciler.reconcile.outcome import ReconcileOutcome
    from reconciler.reconcile.settings import ReconcileSettings

LiveReader = Callable[[str | None], LiveState]  # kube context (or None) -> live state
log = logging.getLogger("kai_gitops.desired")
_P = ParamSpec("_P")
_R = TypeVar("_R")
# The desired trees a run opened, so it can say when the working copy has edits it did not read.
_OPENED: contextvars.ContextVar[list[GitTree] | None] = contextvars.ContextVar("kai_gitops_opened", default=None)
MAX_NAMED = 3  # files named in the uncommitted-edits line; the rest are counted


def open_desired(settings: GitSettings) -> DesiredRepo:
    tree = open_tree(settings.repo, settings.ref, worktree=settings.worktree)
    opened = _OPENED.get()
    if opened is not None:
        opened.append(tree)
    raw = tree.read_optional(CONFIG_FILE)
    if raw is None:
        at = "in the working tree" if settings.worktree else f"at ref {settings.ref}"
        raise UserError(
            f"no {CONFIG_FILE} at the root of the repository {at}",
            where=tree.label,
            hint="create one with `kai-gitops init`, or pass --repo PATH|URL of the GitOps repository",
        )
    config = parse_repo_config(raw, CONFIG_FILE)
    git = GitInfo(tree.label, settings.ref, tree.commit_id, settings.worktree)
    return DesiredRepo(tree, config, git)


def telling_uncommitted_edits(run: Callable[_P, _R]) -> Callable[_P, _R]:
    """When the run ends (with a report or an error), one warning if files it read at the checked-out commit
    have uncommitted edits: the same findings coming back after an edit would otherwise look like the edit
    did nothing. Not in CI, where the working tree is the commit."""

    @wraps(run)
    def telling(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        if _OPENED.get() is not None:  # inside another run: that one tells
            return run(*args, **kwargs)
        token = _OPENED.set([])
        try:
            return run(*args, **kwargs)
        finally:
            opened = _OPENED.get() or []
            _OPENED.reset(token)
            if not _in_ci():
                for tree in opened:
                    _warn_uncommitted(tree)

    return telling


def _warn_uncommitted(tree: GitTree) -> None:
    edited = tree.edited_in_worktree()
    if not edited:
        return
    more = f", +{len(edited) - MAX_NAMED} more" if len(edited) > MAX_NAMED else ""
    named = edited[0] if len(edited) == 1 else f"{len(edited)} files ({', '.join(edited[:MAX_NAMED])}{more})"
    log.warning(
        "%s %s uncommitted edits this run did not read: it checked %s (commit them, or pass --worktree "
        "to check the working tree)",
        named,
        "has" if len(edited) == 1 else "have",
        tree.ref,
    )


def _in_ci() -> bool:
    flag = os.environ.get("CI", "").strip().lower()
    return flag not in ("", "0", "false", "no") or bool(os.environ.get("GITHUB_ACTIONS") or os.environ.get("GITLAB_CI"))


def desired_clusters(repo: DesiredRepo, name: str | None, shard: Shard | None = None) -> list[DesiredCluster]:
    chosen = select_shard(repo.config.select(name), shard)  # before reading: a shard reads only its files
    return [build_desired(repo.tree.read, repo.config.doc, c, repo.git.commit) for c in chosen]


@telling_uncommitted_edits
def run_diff(settings: RunSettings, read_live: LiveReader) -> Report:
    return _diff_one("diff", settings, read_live).report


class Reconciliation(NamedTuple):
    report: Report
    plan: Plan
    live: LiveState  # what the plan was made from: a saved plan is held to it (reconcile/backed.py)


def run_reconcile(
    settings: RunSettings,
    read_live: LiveReader,
    identify: Callable[[str | None], ClusterIdentity] | None = None,
    ours: tuple[OwnWrite, ...] = (),
) -> Reconciliation:
    """The diff report plus the plan that settles what kai-gitops may fix; `identify` (live clusters only)
    names the cluster the plan is for; `ours`, the fields earlier runs wrote (their audit log)."""
    run = _diff_one("reconcile", settings, read_live, ours)
    identity = identify(run.desired.config.kube_context) if identify is not None else None
    plan = build_plan(
        run.report.clusters[0].findings, run.desired, run.live, git=run.report.clusters[0].git, identity=identity
    )
    return Reconciliation(run.report, plan, run.live)


class _OneCluster(NamedTuple):
    report: Report
    desired: DesiredCluster
    live: LiveState


def _diff_one(
    command: str, settings: RunSettings, read_live: LiveReader, ours: tuple[OwnWrite, ...] = ()
) -> _OneCluster:
    started = datetime.now(UTC)
    history = RunHistory(settings.history)
    repo = open_desired(settings.git)
    chosen = _one_cluster(repo.config, settings.cluster, None)
    set_cluster(chosen.name)
    desired = build_desired(repo.tree.read, repo.config.doc, chosen, repo.git.commit)
    with phase("read-live"):
        live = read_live(desired.config.kube_context)  # complete, or it raised: never partial state
    with phase("evaluate"):
        prediction = _predict(live, desired)
        context = ClusterContext(
            desired.name, desired, live, ours=ours, controllers=controllers(repo.config.ownership.controllers)
        )
        waivers = Waiving(repo, [desired.name])
        run = evaluate_cluster(
            context,
            build_facts(desired.name, desired, live, prediction),
            repo,
            settings,
            evaluated_rules(repo, settings.policy, Scope.LIVE),
            waivers,
            started,
        )
    findings = run.findings
    # diff counts its Plan: line as reconcile plans it, operator commands from violations (KAI-R-012) included
    counts = build_plan(findings, desired, live, git=repo.git, identity=None).counts()
    report = ClusterReport(
        desired.name,
        repo.git,
        live.source,
        prediction,
        _healthz(live),
        findings,
        run.rules,
        cluster_anchor(desired),
        counts,
    )
    done = Report(command, [report], settings.fail_on, waivers.leftovers(), config=repo.config)
    return _OneCluster(history.stamp(done, desired.config.kube_context), desired, live)


@telling_uncommitted_edits
def run_doctor(settings: RunSettings, read_live: LiveReader, context: str | None) -> Report:
    """Live-only checks; Git is optional (with --repo the cluster's intent is known too)."""
    started = datetime.now(UTC)
    desired: DesiredCluster | None = None
    repo: DesiredRepo | None = None
    history = RunHistory(settings.history)
    if settings.git.repo is not None:
        repo = open_desired(settings.git)
        chosen = _one_cluster(repo.config, settings.cluster, context)
        desired = build_desired(repo.tree.read, repo.config.doc, chosen, repo.git.commit)
        context = context or desired.config.kube_context
    live = read_live(context)
    prediction = _predict(live, desired)
    name = desired.name if desired else (settings.cluster or context or UNNAMED_LIVE)
    known = controllers(repo.config.ownership.controllers) if repo else ()
    waivers = Waiving(repo, [name])
    run = evaluate_cluster(
        ClusterContext(name, desired, live, controllers=known),
        build_facts(name, desired, live, prediction),
        repo,
        settings,
        evaluated_rules(repo, settings.policy, Scope.LIVE),
        waivers,
        started,
    )
    report = ClusterReport(
        name,
        repo.git if repo else None,
        live.source,
        prediction,
        _healthz(live),
        run.findings,
        run.rules,
        cluster_anchor(desired),
    )
    done = Report("doctor", [report], settings.fail_on, waivers.leftovers(), config=repo.config if repo else None)
    return history.stamp(done, context)


@telling_uncommitted_edits
def run_check(settings: RunSettings) -> Report:
    """The PR check: static rules over every cluster's desired state, no cluster access.

    With a base ref, policies and waivers come from the base: a pull request cannot waive or rewrite the
    rules that judge it. It may still change them; that is reported so reviewers look twice. Without one, the
    repo's own policies are the pull request's: they are evaluated within a time and memory budget.
    """
    if not settings.base_ref:
        settings = replace(settings, policy=replace(settings.policy, untrusted=True))
    history = RunHistory(settings.history)
    head = open_desired(settings.git)
    rules_repo: DesiredRepo | None = head
    repository: list[Finding] = []
    if settings.base_ref:
        rules_repo, repository = _base_rules(settings, head)
    reports = []
    chosen = desired_clusters(head, settings.cluster, settings.shard)
    waivers = Waiving(rules_repo, [d.name for d in chosen])
    policy_rules = evaluated_rules(rules_repo, settings.policy, Scope.STATIC)
    snapshots = _snapshot_queues(
        settings, head.config, chosen, rules_repo.config if settings.base_ref and rules_repo else None
    )
    rendered = _rendered_workloads(head, chosen, settings)
    for desired in chosen:
        facts = build_facts(desired.name, desired, None, None)
        _add_workloads(facts, desired, [rendered[w.name] for w in head.config.workloads_for(desired.name)])
        base_desired = _base_desired(rules_repo, desired.name) if settings.base_ref else None
        if desired.name in snapshots:
            base = [q.spec for q in base_desired.queues] if base_desired is not None else None
            add_snapshot_queues(facts, snapshots[desired.name][0], base)
        snapshot = snapshots[desired.name][1] if desired.name in snapshots else None
        context = ClusterContext(desired.name, desired, snapshot, snapshot=True, reviewing=True, base=base_desired)
        run = evaluate_cluster(context, facts, rules_repo, settings, policy_rules, waivers, settings.history.started)
        reports.append(
            ClusterReport(desired.name, head.git, None, None, None, run.findings, run.rules, cluster_anchor(desired))
        )
    changed = changed_lines(head.tree, settings.base_ref) if settings.base_ref else None
    return history.stamp(
        Report(
            "check",
            reports,
            settings.fail_on,
            repository + waivers.leftovers(),
            changed,
            shard=settings.shard,
            config=head.config,
        )
    )


def _snapshot_queues(
    settings: RunSettings, config: RepoConfig, chosen: list[DesiredCluster], base: RepoConfig | None
) -> dict[str, tuple[SnapshotQueues, LiveState]]:
    """The snapshots `--live-snapshot` names for the clusters this run checks, read before anything else is:
    a wrong name or file is one error, not a finding missing later. A shard ignores the other shards' clusters
    (every shard job is given the same list). Each is held to its cluster's identity (app/live_snapshots.py);
    beside its queues, what it says of KAI Resource Management."""
    from reconciler.app.live_snapshots import checked, expected_cluster_uids
    from reconciler.sources.snapshot import read_live_snapshot

    files: dict[str, str] = {}
    known = [c.name for c in config.clusters]
    for named, path in settings.live_snapshots:
        name = named or settings.cluster
        if name is None:
            raise UserError(
                f"--live-snapshot {path}: which cluster's snapshot is it?",
                hint="write --live-snapshot CLUSTER=FILE, or choose the cluster with --cluster",
            )
        if name not in known:
            raise UserError(
                f"--live-snapshot names cluster '{name}', which {CONFIG_FILE} does not declare",
                hint="known clusters: " + ", ".join(known),
            )
        if settings.cluster is not None and name != settings.cluster:
            raise UserError(
                f"--live-snapshot names cluster '{name}', but --cluster checks only '{settings.cluster}'",
                hint="drop one of them",
            )
        if name in files:
            raise UserError(
                f"--live-snapshot names cluster '{name}' twice ({files[name]}, {path})",
                hint="give one snapshot per cluster",
            )
        files[name] = path
    wanted = {d.name for d in chosen}
    pinned = expected_cluster_uids(config, base)
    read = {name: read_live_snapshot(path) for name, path in files.items() if name in wanted}
    return {
        name: (checked(name, queues, pinned.get(name), settings.live_snapshot_max_age, settings.history.started), krm)
        for name, (queues, krm) in read.items()
    }


def _base_desired(base: DesiredRepo | None, cluster: str) -> DesiredCluster | None:
    """`cluster` as the base ref declares it: KAI-Q-020 in the PR check judges only the numbers the pull request
    changes, KAI-S-001 only the sensitive fields it changes. None (judge against the snapshot's specs, the chart's
    defaults) when the base cannot tell: it has no kai-gitops.yaml or no such cluster, or its files do not build
    (the pull request may be what fixes them)."""
    entry = next((c for c in base.config.clusters if c.name == cluster), None) if base is not None else None
    if base is None or entry is None:
        return None
    try:
        return build_desired(base.tree.read, base.config.doc, entry, base.git.commit)
    except UserError:
        return None


def _rendered_workloads(
    repo: DesiredRepo, chosen: list[DesiredCluster], settings: RunSettings
) -> dict[str, RenderedWorkload]:
    """The function charts deployed to the clusters this run checks, each rendered once."""
    from reconciler.sources.function_charts import render_workloads

    names = {d.name for d in chosen}
    wanted = tuple(w for w in repo.config.workloads if names & set(w.clusters))
    if not wanted:
        return {}
    with phase("render-workloads"):
        return render_workloads(repo.tree, wanted, settings.helm, settings.helm_memory_mb)


def _add_workloads(facts: Facts, desired: DesiredCluster, workloads: list[RenderedWorkload]) -> None:
    from reconciler.checks.workload_facts import register_docs, workload_facts

    if not workloads:
        return
    register_docs(desired, workloads)
    section = facts["desired"]
    if isinstance(section, dict):
        section["workloads"] = workload_facts(desired, workloads)


def _base_rules(settings: RunSettings, head: DesiredRepo) -> tuple[DesiredRepo | None, list[Finding]]:
    from reconciler.app.policy_changes import changed_policy_inputs, policy_change_finding

    base_tree = open_tree(settings.git.repo, settings.base_ref or "HEAD")
    try:
        base_tree.commit_id  # noqa: B018 -- resolve now: a wrong --base is one clear error, not a later one
    except UserError:
        raise UserError(
            f"base ref '{settings.base_ref}' does not exist",
            where=head.git.repo,
            hint="pass the pull request's target branch or commit with --base; in CI, fetch it first",
        ) from None
    if not base_tree.exists(CONFIG_FILE):
        note = policy_change_finding([CONFIG_FILE], settings.base_ref or "", added_config=True)
        return None, [note]
    base_config = parse_repo_config(base_tree.read(CONFIG_FILE), f"{CONFIG_FILE}@{settings.base_ref}")
    base = DesiredRepo(base_tree, base_config, GitInfo(head.git.repo, settings.base_ref or "", base_tree.commit_id))
    changed = changed_policy_inputs(base.tree, base.config, head.tree, head.config)
    return base, [policy_change_finding(changed, settings.base_ref or "")] if changed else []


def _one_cluster(config: RepoConfig, name: str | None, context: str | None) -> ClusterConfig:
    """--cluster, else the one cluster whose kubeContext is --context, else the only cluster."""
    clusters = config.select(name)
    if len(clusters) > 1 and context:
        clusters = tuple(c for c in clusters if c.kube_context == context) or clusters
    if len(clusters) != 1:
        raise UserError(
            f"{CONFIG_FILE} declares {len(clusters)} clusters; choose one with --cluster",
            hint="known: " + ", ".join(c.name for c in clusters),
        )
    return clusters[0]


def _predict(live: LiveState, desired: DesiredCluster | None) -> Verdict:
    wanted = desired.gates.effective if desired and desired.gates else None
    return predict(live.queues, kind_served=live.queue_kind_served, gate_enabled=gate_enabled(live, wanted))


def _healthz(live: LiveState) -> dict[str, JSONLike] | None:
    if live.healthz is None:
        return None
    status, errors = live.healthz.queue_component()
    # NVCA's own words, copied into every format: bounded like findings' text
    return {
        "reachable": live.healthz.reachable,
        "httpStatus": live.healthz.http_status,
        "status": live.healthz.status and truncate_text(live.healthz.status),
        "kai-scheduler-queues": {
            "status": status and truncate_text(status),
            "errors": [truncate_text(e) for e in errors],
        },
        "detail": truncate_text(live.healthz.detail) or None,
    }


def cluster_anchor(desired: DesiredCluster | None) -> Location | None:
    return desired.locate("config", ("clusters", desired.config.index)) if desired is not None else None


@telling_uncommitted_edits
def run_reconcile_command(
    settings: RunSettings, reconcile: ReconcileSettings, target: ClusterTarget | None
) -> ReconcileOutcome:
    """`reconcile`: the plan for a live cluster (or a snapshot), saved or applied as asked."""
    from reconciler.reconcile import run as steps
    from reconciler.reconcile.audit import read_own_writes

    steps.check_settings(reconcile, target is not None)
    ours = read_own_writes(reconcile.audit_log)  # before the cluster is read: a fight needs our earlier writes
    if target is None:
        from reconciler.sources.snapshot import read_snapshot

        snapshot = reconcile.live.snapshot or ""
        report, fresh, live = run_reconcile(settings, lambda _context: read_snapshot(snapshot), ours=ours)
    else:
        report, fresh, live = run_reconcile(settings, target.read_live, target.identity, ours)
    plan = steps.saved_or_fresh(reconcile, fresh, live)
    # Rollout waves (reconcile/rollout.py): with kai-gitops.yaml's `rollout`, the commit statuses say whether this
    # cluster may apply the commit now; after an apply the cluster reports its own.
    wave_gate = rollout.gate(report, reconcile.rollout)
    if not reconcile.apply or target is None or (wave_gate is not None and not wave_gate.decision.apply):
        shown = steps.plan_only(report, plan)
        return shown if wave_gate is None else rollout.held(shown, wave_gate)
    outcome = steps.apply_plan(
        plan,
        report,
        reconcile,
        target,
        reread=lambda: run_reconcile(settings, target.read_live, ours=ours)[:2],
        live=live,
    )
    return outcome if wave_gate is None else rollout.report_apply(outcome, wave_gate)
