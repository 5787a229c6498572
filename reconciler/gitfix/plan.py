"""A fix plan: the findings Git can fix for one cluster, and the file contents after their edits."""

from __future__ import annotations

import difflib
import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from reconciler.core.errors import UserError
from reconciler.findings.finding import Finding, GitEdit, Kind, Severity
from reconciler.gitfix.yaml_splice import apply_edits

BRANCH_PREFIX = "kai-gitops/fix/"


@dataclass(frozen=True)
class FileChange:
    path: str
    before: bytes
    after: bytes

    def unified_diff(self) -> str:
        lines = difflib.unified_diff(
            self.before.decode().splitlines(keepends=True),
            self.after.decode().splitlines(keepends=True),
            f"a/{self.path}",
            f"b/{self.path}",
        )
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


@dataclass(frozen=True)
class Skipped:
    finding: Finding
    reason: str


@dataclass(frozen=True)
class FixPlan:
    cluster: str
    fixed: tuple[Finding, ...]
    changes: tuple[FileChange, ...]
    skipped: tuple[Skipped, ...] = ()
    unfixable: tuple[Finding, ...] = ()  # active errors in Git with no edit that fixes them: fixed by hand

    @property
    def empty(self) -> bool:
        return not self.changes

    @property
    def branch(self) -> str:
        return fix_branch(self.cluster, [f.fingerprint for f in self.fixed])

    def diff(self) -> str:
        return "".join(change.unified_diff() for change in self.changes)


def fix_branch(cluster: str, fingerprints: list[str]) -> str:
    """Named after the cluster and the fixed findings: the same findings give the same branch on every run."""
    digest = hashlib.sha256("\n".join(sorted(set(fingerprints))).encode()).hexdigest()[:8]
    return f"{BRANCH_PREFIX}{cluster}-{digest}"


def plan_fix(cluster: str, findings: list[Finding], read: Callable[[str], bytes]) -> FixPlan:
    """Apply the Git edits of every active finding of `cluster`; a finding whose edit cannot be made safely is
    skipped with its reason (and the file keeps the other findings' edits)."""
    contents: dict[str, bytes] = {}
    originals: dict[str, bytes] = {}
    done: list[GitEdit] = []  # a list: an edit's value may be a list (a gate list rewritten), unhashable
    fixed: list[Finding] = []
    skipped: list[Skipped] = []
    for finding in _fixable(findings, cluster):
        edits = [e for e in finding.fix.git_edits if e not in done] if finding.fix else []
        try:
            updated = _apply(edits, contents, originals, read)
        except UserError as exc:
            skipped.append(Skipped(finding, exc.line()))
            continue
        contents.update(updated)
        done.extend(edits)
        fixed.append(finding)
    changes = tuple(
        FileChange(path, originals[path], data) for path, data in sorted(contents.items()) if data != originals[path]
    )
    return FixPlan(cluster, tuple(fixed) if changes else (), changes, tuple(skipped), _unfixable(findings, cluster))


def _unfixable(findings: list[Finding], cluster: str) -> tuple[Finding, ...]:
    """The cluster's active errors that are broken rules with no Git edit: "Git needs no edit" would be false
    while they remain. Drift is left out: Git is right there, the cluster is fixed by `reconcile`."""
    return tuple(
        f
        for f in findings
        if f.cluster == cluster
        and f.waived_by is None
        and f.severity is Severity.ERROR
        and f.kind is Kind.VIOLATION
        and not (f.fix and f.fix.git_edits)
    )


def _fixable(findings: list[Finding], cluster: str) -> list[Finding]:
    """The cluster's active findings with edits, in canonical key order: keys a fix adds appear in the order
    of canonical-kai-values.yaml (an added key goes after its siblings: the order added is the order it reads)."""
    from reconciler.checks.git_edits import canonical_rank

    chosen = [
        (f, f.fix.git_edits)
        for f in findings
        if f.cluster == cluster and f.waived_by is None and f.fix is not None and f.fix.git_edits
    ]
    return [f for f, _ in sorted(chosen, key=lambda pair: min(canonical_rank(e) for e in pair[1]))]


def _apply(
    edits: list[GitEdit], contents: dict[str, bytes], originals: dict[str, bytes], read: Callable[[str], bytes]
) -> dict[str, bytes]:
    updated: dict[str, bytes] = {}
    for file in dict.fromkeys(e.file for e in edits):
        if file not in originals:
            originals[file] = read(file)
        current = contents.get(file, originals[file])
        updated[file] = apply_edits(current, file, [e for e in edits if e.file == file])
    return updated
