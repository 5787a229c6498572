"""Fix pull requests (GitHub) and merge requests (GitLab): one per cluster, kept current, closed when fixed.

Found again by the hidden marker `<!-- kai-gitops:fix cluster=NAME -->` in the body, on the tool's own
branches (`kai-gitops/fix/<cluster>-<hash8>`, listed on the remote), never by title. Per run:

- Git needs no edit for the cluster: every open fix PR for it is closed with a comment and its branch
  deleted (the base branch already contains the fix, or the findings were waived);
- edits needed: the branch named after these findings is pushed (unless its tip already holds the same
  change on the same base), its PR is opened or its body updated; a PR for an older set of findings is
  closed as superseded and its branch deleted;
- the branch for these findings is there but its PR is closed: a person closed it, so it is not reopened,
  even when the base moves (delete the branch to get a new one). A run whose PR could not be opened deletes
  the branch it pushed, so this state means a person's decision, not a failed run.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum

from reconciler.core.redact import is_secret_key, redact_text
from reconciler.gitfix.branch import Author, FixBranches
from reconciler.gitfix.plan import BRANCH_PREFIX, FixPlan
from reconciler.githost.base import WORDS, GitHost, HostPull, HostWords
from reconciler.githost.redaction import scrub_body
from reconciler.outputs.markdown_format import code_block, escape_markdown, findings_table, inline_code
from reconciler.report.report import finding_order

BODY_LIMIT = 60_000
Link = Callable[[str, int | None], str]
_PAIR = re.compile(r"(?P<key>[\w.\-\"']+)(?P<sep>\s*:\s+)(?P<value>[^,{}\[\]#]*[^,{}\[\]#\s])")


def fix_marker(cluster: str) -> str:
    return f"<!-- kai-gitops:fix cluster={cluster} -->"


@dataclass(frozen=True)
class FixContext:
    base_branch: str  # the PR/MR's target branch
    base_commit: str  # the commit that was read: the fix commit's parent
    author: Author
    labels: tuple[str, ...] = ()
    assignees: tuple[str, ...] = ()
    link: Link | None = None  # file:line at the base commit
    command: str = "check"
    words: HostWords = WORDS["github"]  # the host's own: propose_fix sets them from the host it talks to


class FixAction(StrEnum):
    """What a run did about one cluster's fix pull request."""

    OPENED = "opened"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    DECLINED = "declined"  # a person closed the pull request for these findings: not reopened
    FOREIGN = "foreign"  # someone else's pull request is open from the fix branch: left to them
    KEPT = "kept"  # the branch has someone else's commits: not rewritten
    CLOSED = "closed"  # the base needs no edit any more
    NONE = "none"  # no edit needed and no pull request open
    DRY_RUN = "dry-run"


@dataclass(frozen=True)
class FixOutcome:
    cluster: str
    action: FixAction
    branch: str | None = None
    pull: HostPull | None = None
    pushed: bool = False
    closed: tuple[int, ...] = ()
    skipped: tuple[str, ...] = field(default_factory=tuple)
    words: HostWords = WORDS["github"]

    def line(self) -> str:
        words = self.words
        fix = f"fix {words.pull} for {self.cluster}"
        closed = f"; closed {', '.join(words.pull_ref(n) for n in self.closed)}" if self.closed else ""
        if self.action == FixAction.NONE:
            return f"{fix}: none needed (Git needs no edit){closed}"
        if self.action == FixAction.CLOSED:
            return f"{fix}: base already fixed{closed}, branch deleted"
        if self.action == FixAction.KEPT:
            return (
                f"{fix}: {self.branch} has commits by someone else; not "
                "rewritten (review it, or delete the branch to have it proposed again)"
            )
        if self.action == FixAction.FOREIGN and self.pull is not None:
            author = f"by {self.pull.author!r}" if self.pull.author else "by an unknown author"
            return (
                f"{fix}: {words.pull_ref(self.pull.number)} from {self.branch} ({self.pull.url}) "
                f"is open but was opened {author}, not by kai-gitops; left as it is (close it and delete the "
                "branch to have the fix proposed again)"
            )
        if self.action == FixAction.DECLINED:
            return (
                f"{fix}: the {words.pull} from {self.branch} for these findings "
                "was closed by a person; not reopened (delete the branch to propose it again)"
            )
        pull = f" {words.pull_ref(self.pull.number)}: {self.pull.url}" if self.pull else ""
        pushed = "pushed" if self.pushed else "branch unchanged"
        return f"{fix}{pull}: {self.action} ({pushed} {self.branch}){closed}"


def propose_fix(host: GitHost, branches: FixBranches, plan: FixPlan, ctx: FixContext) -> FixOutcome:
    words = host.settings.words
    ctx = replace(ctx, words=words)
    marker = fix_marker(plan.cluster)
    own = own_branches(branches.heads(f"{BRANCH_PREFIX}{plan.cluster}-"), plan.cluster)
    skipped = tuple(f"{s.finding.rule_id}: {s.reason}" for s in plan.skipped)
    if plan.empty:
        closed = _close_all(host, branches, marker, sorted(own), _fixed_comment(plan.cluster, ctx))
        return FixOutcome(
            plan.cluster, FixAction.CLOSED if own else FixAction.NONE, closed=closed, skipped=skipped, words=words
        )
    branch = plan.branch
    pull = host.find_pull(marker, branch) if branch in own else None
    if branch in own and pull is None:  # our branch but no PR of ours: closed by a person, or someone else's
        foreign = host.open_pull_from(branch)
        action = FixAction.FOREIGN if foreign is not None else FixAction.DECLINED
        return FixOutcome(plan.cluster, action, branch, foreign, skipped=skipped, words=words)
    published = branches.publish(
        branch, ctx.base_commit, plan.changes, commit_message(plan), ctx.author, own.get(branch)
    )
    if published.foreign:
        return FixOutcome(plan.cluster, FixAction.KEPT, branch, pull, skipped=skipped, words=words)
    body = render_fix_body(plan, ctx)
    if pull is None:
        pull = _open(host, branches, branch, published.pushed, marker, _title(plan), body, ctx)
        action = FixAction.OPENED
    elif pull.body.strip() != scrub_body(body).strip():
        pull = host.update_pull(pull.number, body=body)
        action = FixAction.UPDATED
    else:
        action = FixAction.UNCHANGED
    stale = sorted(b for b in own if b != branch)
    closed = _close_all(
        host, branches, marker, stale, f"Superseded by {words.pull_ref(pull.number)}: the findings changed."
    )
    return FixOutcome(plan.cluster, action, branch, pull, published.pushed, closed, skipped, words)


def _open(
    host: GitHost, branches: FixBranches, branch: str, pushed: bool, marker: str, title: str, body: str, ctx: FixContext
) -> HostPull:
    """Open the PR. When that fails: a PR another run opened meanwhile is taken as ours; otherwise a branch this
    run pushed is deleted again, so "branch without an open PR" keeps meaning "a person closed it" and the next
    run proposes the fix instead of taking it as declined."""
    try:
        return host.create_pull(branch, ctx.base_branch, title, body, ctx.labels, ctx.assignees)
    except Exception as failure:
        try:
            raced = host.find_pull(marker, branch)
        except Exception:
            raise failure from None  # state unknown: keep the branch, report the first error
        if raced is not None:
            return raced
        if pushed:
            with contextlib.suppress(Exception):  # the host's error is the one to report
                branches.delete(branch)
        raise


def own_branches(heads: dict[str, str], cluster: str) -> dict[str, str]:
    """Only `kai-gitops/fix/<cluster>-<8 hex>`: cluster `prod` must never claim `prod-addon`'s branches."""
    pattern = re.compile(rf"^{re.escape(BRANCH_PREFIX + cluster)}-[0-9a-f]{{8}}$")
    return {name: tip for name, tip in heads.items() if pattern.match(name)}


def _close_all(host: GitHost, branches: FixBranches, marker: str, names: list[str], comment: str) -> tuple[int, ...]:
    closed = []
    for name in names:
        pull = host.find_pull(marker, name)
        if pull is not None:
            host.comment_pull(pull.number, comment)
            host.close_pull(pull.number)
            closed.append(pull.number)
        branches.delete(name)
    return tuple(closed)


def _fixed_comment(cluster: str, ctx: FixContext) -> str:
    return (
        f"The base branch {inline_code(ctx.base_branch)} at {inline_code(ctx.base_commit[:12])} needs no "
        f"kai-gitops edit for cluster {inline_code(cluster)} any more (already fixed, or the findings were "
        f"waived). Closing this {ctx.words.pull} and deleting its branch."
    )


def _title(plan: FixPlan) -> str:
    count = len(plan.fixed)
    return f"kai-gitops: fix {count} finding{'s' * (count != 1)} in cluster {plan.cluster}"


def commit_message(plan: FixPlan) -> str:
    """Rule, title and place of each fixed finding: never a message or a value, which may quote release values."""
    lines = [_title(plan), ""]
    for finding in sorted(plan.fixed, key=finding_order):
        where = f" ({finding.location.file}:{finding.location.line})" if finding.location else ""
        lines.append(f"- {finding.rule_id} {finding.title}{where}")
    lines += ["", "Fingerprints: " + " ".join(sorted(f.fingerprint for f in plan.fixed))]
    return redact_text("\n".join(lines)) + "\n"


def render_fix_body(plan: FixPlan, ctx: FixContext, *, listed: int | None = None) -> str:
    """The PR/MR body; `listed` caps the findings table (set only when the whole one does not fit)."""
    fixed = sorted(plan.fixed, key=finding_order)
    shown = fixed if listed is None else fixed[:listed]
    table = findings_table(shown, ctx.link)
    if len(shown) < len(fixed):
        table += f"\n\n_{len(fixed) - len(shown)} more finding(s) not listed here; the commit message names each._"
    head = [
        fix_marker(plan.cluster),
        f"## kai-gitops: fix for cluster {inline_code(plan.cluster)}",
        "",
        f"Found by `kai-gitops {ctx.command}` on {inline_code(ctx.base_branch)} at "
        f"{inline_code(ctx.base_commit[:12])}. This {ctx.words.pull} changes only the lines below; comments, key "
        "order and quoting in the files stay as they are.",
        "",
        "### Findings fixed",
        "",
        table,
        "",
        "### Change",
        "",
        code_block(safe_diff(plan, ctx.words), "diff"),
    ]
    skipped = (
        [
            "",
            "### Not fixed automatically",
            "",
            *(f"- {escape_markdown(s.finding.rule_id)}: {escape_markdown(s.reason)}" for s in plan.skipped),
        ]
        if plan.skipped
        else []
    )
    tail = [
        "",
        f"_kai-gitops keeps this {ctx.words.pull} current: it is updated when the findings change and closed "
        "(with its branch deleted) when the base branch no longer needs the edit. Do not remove the hidden "
        "marker._",
    ]
    body = "\n".join([*head, *skipped, *tail]) + "\n"
    if len(body) > BODY_LIMIT and plan.changes:  # a huge change: the diff is in the host's own diff tab anyway
        return render_fix_body(FixPlan(plan.cluster, plan.fixed, (), plan.skipped), ctx, listed=listed)
    if len(body) > BODY_LIMIT and shown:  # still too long: the table itself, so list fewer findings
        return render_fix_body(plan, ctx, listed=len(shown) // 2)
    return body


def safe_diff(plan: FixPlan, words: HostWords = WORDS["github"]) -> str:
    """The changed lines only (no context: a neighbouring line may hold a credential), values under secret-looking
    keys masked."""
    import difflib

    out = []
    for change in plan.changes:
        before = change.before.decode().splitlines()
        after = change.after.decode().splitlines()
        for line in difflib.unified_diff(before, after, f"a/{change.path}", f"b/{change.path}", n=0, lineterm=""):
            out.append(_mask_line(line))
    return "\n".join(out) if out else f"(the change is too large to show here: see the {words.diff_tab} tab)"


def _mask_line(line: str) -> str:
    """Every `key: value` pair on the line (block or flow style) whose key or value looks secret loses its value."""
    if line.startswith(("+++ b/", "--- a/", "@@ ")):  # diff headers; a changed line is masked even if it starts "--"
        return line

    def mask(match: re.Match[str]) -> str:
        key, value = match["key"].strip("'\""), match["value"].strip("'\"")
        secret = is_secret_key(key) or redact_text(value) != value  # by name, or by shape (a blob, a PEM)
        return f"{match['key']}{match['sep']}<redacted>" if secret else match.group(0)

    return redact_text(_PAIR.sub(mask, line))
