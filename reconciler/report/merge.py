"""`report merge`: the JSON reports of `check --shard i/n` jobs folded into the report one run would give; also
the per-cluster `reconcile` or `diff` reports of a hub's fleet run (deploy/helm, mode fleet), one command a merge.

What is refused (one line naming the file): another command than `check`, `reconcile` or `diff`, reports of
different commands, another schemaVersion,
reports of different commits, a cluster in two reports, a shard twice, missing shards, sharded mixed
with unsharded reports, and differing `failOn` without `--fail-on`.

Repository findings (about the change and the waivers file, not one cluster) come from every shard:
identical ones are kept once. "Waiver matches nothing" (KAI-W-002) is per shard, so an unscoped
waiver is unused only when every report says so; a waiver scoped to one cluster is judged only by the
report that checked that cluster, so its verdict is kept as is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reconciler.core.errors import UserError
from reconciler.findings.builtin_rules import WAIVER_UNUSED
from reconciler.findings.finding import Finding, Severity
from reconciler.report.reader import load_report
from reconciler.report.report import ClusterReport, Report


@dataclass(frozen=True)
class Input:
    file: str
    report: Report


def merge_files(files: Sequence[str], fail_on: Severity | None) -> Report:
    if not files:
        raise UserError("report merge needs at least one JSON report", hint="kai-gitops report merge a.json b.json")
    return merge([Input(f, load_report(f)) for f in files], fail_on)


MERGEABLE = ("check", "reconcile", "diff")  # the commands whose reports hold clusters a run of each could hold


def merge(inputs: Sequence[Input], fail_on: Severity | None = None) -> Report:
    command = inputs[0].report.command if inputs else "check"
    for item in inputs:
        if item.report.command not in MERGEABLE:
            raise UserError(
                f"is a '{item.report.command}' report; only {', '.join(MERGEABLE)} reports can be merged",
                where=item.file,
            )
        if item.report.command != command:
            raise UserError(
                f"is a '{item.report.command}' report, but {inputs[0].file} is a '{command}' one",
                where=item.file,
                hint="merge the reports of one command",
            )
    _same_commit(inputs)
    _complete_shards(inputs)
    clusters = _clusters(inputs)
    started = min((i.report.generated_at for i in inputs if i.report.generated_at), default=None)  # the first shard
    return Report(
        command,
        clusters,
        fail_on or _fail_on(inputs),
        _repository(inputs),
        _changed_lines(inputs),
        generated_at=started,
    )


def _same_commit(inputs: Sequence[Input]) -> None:
    first: tuple[str, str] | None = None  # (file, commit); paths may differ between runners, commits not
    for item in inputs:
        for label in sorted({c.git.commit for c in item.report.clusters if c.git and c.git.commit}):
            if first is None:
                first = (item.file, label)
            elif label != first[1]:
                raise UserError(
                    f"report is of commit {label[:12]}, but {first[0]} is of {first[1][:12]}",
                    where=item.file,
                    hint="merge the shards of one run only",
                )


def _complete_shards(inputs: Sequence[Input]) -> None:
    sharded = [(i, i.report.shard) for i in inputs if i.report.shard is not None]
    if not sharded:
        return
    if len(sharded) != len(inputs):
        plain = next(i for i in inputs if i.report.shard is None)
        raise UserError(
            "report is not of a shard, but others are",
            where=plain.file,
            hint="merge the reports of one `check --shard i/n` matrix",
        )
    first, count = sharded[0][0], sharded[0][1].count
    owner: dict[int, str] = {}
    for item, shard in sharded:
        if shard.count != count:
            raise UserError(
                f"report is of shard {shard}, but {first.file} is of one of {count}",
                where=item.file,
                hint="merge the reports of one `check --shard i/n` matrix",
            )
        if shard.index in owner:
            raise UserError(f"shard {shard} is given twice (also {owner[shard.index]})", where=item.file)
        owner[shard.index] = item.file
    missing = [f"{i}/{count}" for i in range(1, count + 1) if i not in owner]
    if missing:
        raise UserError(
            f"shard(s) {', '.join(missing)} missing: a merged report would silently lack their clusters",
            where=inputs[-1].file,
            hint="pass every shard's report",
        )


def _clusters(inputs: Sequence[Input]) -> list[ClusterReport]:
    owner: dict[str, str] = {}
    clusters: list[ClusterReport] = []
    for item in inputs:
        for cluster in item.report.clusters:
            if cluster.cluster in owner:
                raise UserError(
                    f"cluster {cluster.cluster} is also in {owner[cluster.cluster]}",
                    where=item.file,
                    hint="reports to merge must cover disjoint clusters (one per shard)",
                )
            owner[cluster.cluster] = item.file
            clusters.append(cluster)
    # Shards interleave: back to kai-gitops.yaml's order (each cluster's entry line), as one run lists them.
    return sorted(clusters, key=lambda c: (c.anchor.line or 0 if c.anchor else 1 << 62, c.cluster))


def _changed_lines(inputs: Sequence[Input]) -> dict[str, frozenset[int]] | None:
    """Every shard of one `--base` run computed the same changed lines; a union is right for --cluster runs too."""
    found = [i.report.changed_lines for i in inputs if i.report.changed_lines is not None]
    if not found:
        return None
    merged: dict[str, frozenset[int]] = {}
    for changed in found:
        for file, lines in changed.items():
            merged[file] = merged.get(file, frozenset()) | lines
    return merged


def _fail_on(inputs: Sequence[Input]) -> Severity:
    levels = {i.report.fail_on for i in inputs}
    if len(levels) > 1:
        raise UserError(
            f"reports were written with different --fail-on ({', '.join(sorted(levels))})",
            where=inputs[-1].file,
            hint="choose one with report merge --fail-on",
        )
    return levels.pop() if levels else Severity.WARNING


def _repository(inputs: Sequence[Input]) -> list[Finding]:
    """Each distinct repository finding once; an unscoped unused-waiver note only if no report used it."""
    seen: dict[str, Finding] = {}
    reported_by: dict[str, int] = {}
    for item in inputs:
        for finding in {f.fingerprint: f for f in item.report.repository}.values():
            seen.setdefault(finding.fingerprint, finding)
            reported_by[finding.fingerprint] = reported_by.get(finding.fingerprint, 0) + 1
    return [f for key, f in seen.items() if not _used_elsewhere(f, reported_by[key], len(inputs))]


def _used_elsewhere(finding: Finding, reports: int, total: int) -> bool:
    if finding.rule_id != WAIVER_UNUSED.id:
        return False
    scope = (finding.extra.get("waiver") or {}).get("cluster")
    return scope is None and reports < total
