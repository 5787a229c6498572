"""Markdown for people reading a pull/merge request: a PR comment, a CI job summary, an issue or PR body.

GitHub-flavoured Markdown with a little HTML (`<details>`), which GitHub and GitLab both render. Every
string that came from a user's files or a cluster goes through `escape_markdown`, so a queue name or a
value cannot add links, mentions, images or HTML to the comment. Commands go in code fences, which render
nothing, with a fence longer than any backtick run inside.

Other modules reuse the pieces: `escape_markdown`, `code_block`, `findings_table` and `finding_details`
(drift issues and fix PR bodies), `problems_table`/`problem_details` (one entry per problem), and
`render(..., link=…, limit=…)` for a comment or a job summary; `render_error` when the run stopped on an
error before it had a report.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from reconciler.core.exits import ExitCode
from reconciler.core.printable import visible, visible_block
from reconciler.core.refs import Location
from reconciler.core.show import show_value
from reconciler.findings.attribution import attribution_lines
from reconciler.findings.builtin_rules import lists_changes
from reconciler.findings.finding import Finding, Kind
from reconciler.findings.problems import Problem, group_problems
from reconciler.outputs.input_error import InputError
from reconciler.report.history import age_note
from reconciler.report.report import ClusterReport, Report, finding_order

Link = Callable[[str, int | None], str]  # (repo-relative path, line or None) -> URL, e.g. a blob at a commit
MARKER = "<!-- kai-gitops-report -->"  # lets a host find and update its own comment
_ICON = {"error": "🔴", "warning": "🟠", "info": "🔵"}
_INLINE_SPECIAL = re.compile(r"([\\`*_\[\]|~])")  # emphasis, code, links, table cells, strikethrough
_BLOCK_START = re.compile(r"^(\s*)([#>+=-]|\d+[.)])")  # headings, quotes, lists, setext underlines
_MENTION = re.compile(r"([@#])(?=\w)")


def escape_markdown(text: object) -> str:
    """`text` shown literally in Markdown: HTML and Markdown syntax escaped, no mentions or issue links, one line,
    control and bidirectional-text characters as visible escapes (core.printable)."""
    value = visible(" ".join(str(text).split()))  # a newline could end a table row or start a block
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    value = _INLINE_SPECIAL.sub(r"\\\1", value)
    value = _BLOCK_START.sub(lambda m: f"{m.group(1)}{m.group(2)[:-1]}\\{m.group(2)[-1]}", value)
    # "@team" would notify people and "#12" link an issue; a zero-width space after the sign stops both.
    return _MENTION.sub(lambda m: f"{m.group(1)}&#8203;", value)


def code_block(text: str, language: str = "") -> str:
    """A fenced block that nothing inside can close: the fence is longer than the longest backtick run. Control
    and bidirectional-text characters show as escapes: a code block renders them as they are."""
    text = visible_block(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def inline_code(text: str) -> str:
    """A one-line code span (escape_markdown'd text would show its backslashes inside one)."""
    value = visible(" ".join(text.split()))
    longest = max((len(run) for run in re.findall(r"`+", value)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{ticks}{pad}{value}{pad}{ticks}"


def where(location: Location | None, link: Link | None = None) -> str:
    """`file:line:col`, as a link when the host can build one."""
    if location is None:
        return ""
    label = escape_markdown(str(location))
    if link is None:
        return label
    url = link(location.file, location.line)
    return f"[{label}]({url.replace(')', '%29').replace(' ', '%20')})"


def render(report: Report, *, color: bool | None = None, link: Link | None = None, limit: int | None = None) -> str:
    """The whole report; with `limit` (characters) the tail is cut at a section boundary with a note."""
    blocks = [_heading(report), _overview(report)]
    if report.repository:
        blocks.append(
            _section(
                "This change",
                "Findings about the run itself (waivers, policy edits).",
                sorted(report.repository, key=finding_order),
                link,
            )
        )
    for cluster in report.clusters:
        blocks.append(_cluster_section(report.command, cluster, link))
    return _join_within(blocks, limit)


def render_error(error: InputError, *, color: bool | None = None, link: Link | None = None) -> str:
    """The run's error, where it is and what to do; nothing was checked, so no verdict on the findings."""
    place = where(error.location, link)
    lines = [
        f"{MARKER}\n## kai-gitops {escape_markdown(error.command)}: ❌ stopped on an error",
        "",
        f"{place}: {escape_markdown(error.message)}" if place else escape_markdown(error.message),
        "",
        "Nothing was checked: the run stopped at this error. Fix it and run again.",
    ]
    return "\n".join(lines) + "\n"


def findings_table(findings: Iterable[Finding], link: Link | None = None) -> str:
    rows = ["| | rule | where | problem |", "|---|---|---|---|"]
    for f in findings:
        place = where(f.location, link) or escape_markdown(str(f.subject or "—"))
        waived = " (waived)" if f.waived_by else ""
        rows.append(
            f"| {_ICON[f.severity.value]} {f.severity.value}{waived} | {escape_markdown(f.rule_id)} | "
            f"{place} | {escape_markdown(_first_sentence(f.message))} |"
        )
    return "\n".join(rows)


def problems_table(problems: Iterable[Problem], link: Link | None = None) -> str:
    """One row per problem: every rule that reports it, where, and what the leading finding says."""
    rows = ["| | rules | where | problem |", "|---|---|---|---|"]
    for p in problems:
        f = p.lead
        place = where(f.location, link) or escape_markdown(str(f.subject or "—"))
        waived = " (waived)" if p.waived else ""
        rules = ", ".join(escape_markdown(r) for r in p.rule_ids)
        rows.append(
            f"| {_ICON[p.severity.value]} {p.severity.value}{waived} | {rules} | {place} | "
            f"{escape_markdown(_first_sentence(f.message))} |"
        )
    return "\n".join(rows)


def problem_details(problem: Problem, link: Link | None = None) -> str:
    """The leading finding in full; the other rules' findings of the same problem nested under it."""
    text = finding_details(problem.lead, link)
    others = list(problem.findings[1:])
    if not others:
        return text
    nested = "\n\n".join(f"Also **{escape_markdown(f.rule_id)}**: {escape_markdown(f.message)}" for f in others)
    return text.replace("\n</details>", f"\n{nested}\n\n</details>")


def finding_details(f: Finding, link: Link | None = None) -> str:
    """One finding in full, collapsed: message, subject, place, the fix and the command to run."""
    summary = f"{_ICON[f.severity.value]} <b>{escape_markdown(f.rule_id)}</b> {escape_markdown(f.title or f.kind)}"
    summary += f" · {escape_markdown(note)}" if (note := age_note(f)) else ""
    lines = [f"<details><summary>{summary}</summary>", "", escape_markdown(f.message), ""]
    if f.subject:
        lines.append(f"- object: {inline_code(str(f.subject))}")
    if f.location:
        path = f" ({inline_code(f.location.dotted_path())})" if f.location.path else ""
        lines.append(f"- where: {where(f.location, link)}{path}")
    lines += [f"- {escape_markdown(line)}" for line in attribution_lines(f.attribution, f.live, f.desired)]
    if f.waived_by:
        lines.append(f"- waived: {escape_markdown(f.waived_by)}")
    if f.last_write:
        bold = "**" if f.last_write.by_person else ""
        lines.append(f"- {bold}{escape_markdown(f.last_write.shown())}{bold}")
    elif f.no_write_found:
        lines.append(f"- {escape_markdown(f.no_write_found.sentence())}")
    if f.fix and f.fix.description:
        lines.append(f"- fix: {escape_markdown(f.fix.description)}")
    lines.append("")
    if f.fix and f.fix.command:
        # One command, one line: a line break in it can only come from a name, and a line of its own in a CI
        # log may be a workflow command (`::error …`).
        lines += [code_block(visible(f.fix.command), "sh"), ""]
    lines.append("</details>")
    return "\n".join(lines)


def plan_excerpt(findings: Iterable[Finding]) -> str:
    """Drift as a plan, `+` create, `~` change, `!` for the operator, in a diff block reviewers know."""
    lines: list[str] = []
    for f in findings:
        if f.kind is not Kind.DRIFT or f.waived_by:
            continue
        action = f.fix.action.value if f.fix else "none"
        sign = {"create": "+", "update": "~"}.get(action, "!")
        lines.append(f"{sign} {f.subject or f.rule_id}  {f.rule_id}")
        for change in f.changes if lists_changes(f.rule_id) else ():
            lines.append(f"    {change.shown}: {_plain(change.live)} → {_plain(change.want)}")
        if f.fix and f.fix.command:
            lines.append(f"    run: {f.fix.command}")
    return code_block("\n".join(lines), "diff") if lines else ""


def _heading(report: Report) -> str:
    totals = report.totals()
    verdict = "✅ passed" if report.exit_code == ExitCode.CLEAN else "❌ failed"
    return (
        f"{MARKER}\n## kai-gitops {escape_markdown(report.command)}: {verdict}\n\n"
        f"**{_count(totals['problems'], 'problem')}** ({_count(totals['findings'], 'finding')}): "
        f"{totals['errors']} error(s), {totals['warnings']} warning(s), {totals['info']} info"
        f"{_waived_note(totals['waived'])}; fails on {report.fail_on.value} and above."
    )


# The overview's name for the one live state a run read with nothing naming its cluster (ClusterReport.unnamed_live).
UNNAMED_LIVE_TITLE = "live state (Git not read)"


def _overview(report: Report) -> str:
    rows = [
        "| cluster | problems | errors | warnings | info | drift | waived | NVCA kai-scheduler-queues |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for c in report.clusters:
        s = c.summary()
        nvca = escape_markdown(c.nvca.status) if c.nvca else "—"
        name = UNNAMED_LIVE_TITLE if c.unnamed_live else escape_markdown(c.cluster)
        rows.append(
            f"| {name} | {s['problems']} | {s['errors']} | {s['warnings']} | "
            f"{s['info']} | {s['drift']} | {s['waived']} | {nvca} |"
        )
    return "\n".join(rows)


def _cluster_section(command: str, c: ClusterReport, link: Link | None) -> str:
    head = []
    if c.git:
        head.append(f"desired {inline_code(c.git.ref)} ({inline_code(c.git.short_commit)})")
    elif c.unnamed_live:
        head.append("Git was not read (no --repo): only the live checks ran")
    if c.live_source:
        head.append(f"live {escape_markdown(c.live_source)}")
    findings = sorted(c.findings, key=finding_order)
    title = "Live state" if c.unnamed_live else f"Cluster {c.cluster}"
    parts = [_section(title, " · ".join(head), findings, link)]
    plan = plan_excerpt(findings)
    if plan:
        parts.append(f"**Plan** (what `kai-gitops` would change in {escape_markdown(c.cluster)}):\n\n{plan}")
    if c.nvca is not None and not c.nvca.healthy:
        errors = "\n".join(f"> {escape_markdown(e)}" for e in c.nvca.errors)
        parts.append(f"**NVCA prediction** kai-scheduler-queues: {escape_markdown(c.nvca.status)}\n\n{errors}")
    return "\n\n".join(parts)


def _section(title: str, intro: str, findings: list[Finding], link: Link | None) -> str:
    parts = [f"### {escape_markdown(title)}"]
    if intro:
        parts.append(intro)
    if not findings:
        parts.append("No findings.")
        return "\n\n".join(parts)
    problems = group_problems(findings)
    parts.append(problems_table(problems, link))
    parts.extend(problem_details(p, link) for p in problems)
    return "\n\n".join(parts)


def _join_within(blocks: list[str], limit: int | None) -> str:
    text = "\n\n".join(blocks) + "\n"
    if limit is None or len(text.encode()) <= limit:
        return text
    note = "\n\n> **Truncated**: the report is longer than this place allows; the JSON or SARIF output has all of it.\n"
    # Cut between paragraphs, never inside a table row; close what the cut leaves open (fences, <details>).
    pieces = [piece for block in blocks for piece in block.split("\n\n")]
    kept: list[str] = []
    size = len(note.encode())
    for piece in pieces:
        if size + len(piece.encode()) + 2 > limit:
            break
        kept.append(piece)
        size += len(piece.encode()) + 2
    while kept:
        cut = _close_open_details("\n\n".join(kept)) + note
        if len(cut.encode()) <= limit:
            return cut
        kept.pop()
    return note.lstrip()


def _close_open_details(text: str) -> str:
    open_count = text.count("<details>") - text.count("</details>")
    fences = re.findall(r"^(`{3,})", text, flags=re.MULTILINE)
    if len(fences) % 2:
        text += "\n" + fences[-1]
    return text + "\n\n</details>" * max(open_count, 0)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"


def _waived_note(waived: int) -> str:
    return f", {waived} waived" if waived else ""


def _first_sentence(message: str) -> str:
    text = " ".join(message.split())
    return text if len(text) <= 160 else text[:157] + "…"


def _plain(value: object) -> str:
    return " ".join(show_value(value).split())
