"""GitHub Actions: workflow-command annotations on the changed lines, and a Markdown job summary.

GitHub shows at most 10 annotations of each level per step and drops the rest silently. So: one
annotation per problem (not per rule), problems on lines the pull request changed first (`--base`), at
most 10 per level, and when more exist a notice that says how many and where to read them (the job
summary lists everything). Values are escaped as @actions/core does (data: `%`, CR, LF; properties also
`:` and `,`), and the plain-text log after the annotations sits inside `::stop-commands::TOKEN` … `::TOKEN::`
with a random token, so a queue name that reads `::error::…` is printed, never run.

A run that stopped on an error before it had a report is one `::error` annotation at the file, line and
column the error names (`render_error`); its job summary entry is the markdown form (`error_summary`).
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable

from reconciler.core.printable import visible_block
from reconciler.core.refs import Location
from reconciler.findings.finding import REPOSITORY
from reconciler.findings.problems import Problem, group_problems
from reconciler.outputs.input_error import InputError
from reconciler.outputs.markdown_format import Link
from reconciler.report.report import ClusterReport, Report, finding_order

MAX_PER_LEVEL = 10  # GitHub's per-step limit for each of error, warning, notice
SUMMARY_LIMIT = 1024 * 1024  # $GITHUB_STEP_SUMMARY takes at most 1 MiB per step
_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    """GitHub's own escapes for a workflow command's data (`%`, CR, LF: a message may span lines), and every
    other control character (ESC, BEL, C1, bidirectional overrides) shown as an escape, as in the text output:
    the runner prints the annotation into the log, and a name from Git or the cluster may carry them."""
    return visible_block(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(report: Report, *, color: bool | None = None, token: str | None = None) -> str:
    placed = [_placed(problem, cluster) for cluster, problem in _problems(report)]
    changed = report.changed_lines or {}
    placed.sort(key=lambda item: (not _on_changed_line(item[1], changed), -item[0].severity.rank))
    lines: list[str] = []
    shown = {level: 0 for level in _COMMAND.values()}
    hidden = {level: 0 for level in _COMMAND.values()}
    overflow = any(
        sum(1 for p, _ in placed if _COMMAND[p.severity.value] == level) > MAX_PER_LEVEL for level in _COMMAND.values()
    )
    for problem, location in placed:
        level = _COMMAND[problem.severity.value]
        # The overflow notice is a notice too: keep a slot for it.
        cap = MAX_PER_LEVEL - 1 if level == "notice" and overflow else MAX_PER_LEVEL
        if shown[level] >= cap:
            hidden[level] += 1
            continue
        shown[level] += 1
        lines.append(annotation(level, problem, location))
    if any(hidden.values()):
        lines.append(_overflow_notice(hidden))
    lines.extend(_plain_log(report, token or _token()))
    return "\n".join(lines) + "\n"


def annotation(level: str, problem: Problem, location: Location | None) -> str:
    f = problem.lead
    props: list[tuple[str, str]] = []
    if location is not None:
        props.append(("file", location.file))
        if location.line is not None:
            props.append(("line", str(location.line)))
            same_line = location.end_line in (None, location.line)
            if location.column is not None and same_line:
                props.append(("col", str(location.column)))
            if location.end_line is not None and not same_line:
                props.append(("endLine", str(location.end_line)))
            elif location.end_column is not None and same_line:
                props.append(("endColumn", str(location.end_column)))
    where = "" if f.cluster == REPOSITORY else f" ({f.cluster})"  # "(repository)" needs no second pair
    props.append(("title", f"{' + '.join(problem.rule_ids)}: {f.title or f.rule_id}{where}"))
    head = ",".join(f"{key}={escape_property(value)}" for key, value in props)
    return f"::{level} {head}::{escape_data(_message(problem))}"


def render_error(error: InputError) -> str:
    return _command("error", error.location, error.title, error.message) + "\n"


def _command(level: str, location: Location | None, title: str, message: str) -> str:
    props: list[tuple[str, str]] = []
    if location is not None:
        props.append(("file", location.file))
        if location.line is not None:
            props.append(("line", str(location.line)))
            if location.column is not None:
                props.append(("col", str(location.column)))
    props.append(("title", title))
    head = ",".join(f"{key}={escape_property(value)}" for key, value in props)
    return f"::{level} {head}::{escape_data(message)}"


def _message(problem: Problem) -> str:
    f = problem.lead
    parts = [f.message]
    if f.location is None and f.subject is not None:
        parts.append(f"Live object {f.subject} (not in a file).")
    parts += [f"Also {other.rule_id}: {other.message}" for other in problem.also]
    if f.fix and (f.fix.command or f.fix.description):
        parts.append(f"Fix: {f.fix.command or f.fix.description}")
    return "\n".join(parts)


def _problems(report: Report) -> Iterable[tuple[ClusterReport | None, Problem]]:
    for problem in group_problems(f for f in sorted(report.repository, key=finding_order) if not f.waived_by):
        yield None, problem
    for cluster in report.clusters:
        active = [f for f in sorted(cluster.findings, key=finding_order) if not f.waived_by]
        for problem in group_problems(active):
            yield cluster, problem


def _placed(problem: Problem, cluster: ClusterReport | None) -> tuple[Problem, Location | None]:
    """Where it shows: the leading finding's place, else any member's, else the cluster's config entry."""
    located = next((f.location for f in problem.findings if f.location is not None), None)
    return problem, located or (cluster.anchor if cluster else None)


def _on_changed_line(location: Location | None, changed: dict[str, frozenset[int]]) -> bool:
    if location is None or location.line is None or location.file not in changed:
        return False
    last = location.end_line or location.line
    return any(line in changed[location.file] for line in range(location.line, last + 1))


def _overflow_notice(hidden: dict[str, int]) -> str:
    counts = ", ".join(f"{n} more {level}{'s' if n != 1 else ''}" for level, n in hidden.items() if n)
    text = (
        f"{counts} not annotated (GitHub shows {MAX_PER_LEVEL} per level). Every problem is in the job "
        "summary and in the log of this step; SARIF (-o sarif=FILE) puts them all in code scanning."
    )
    return f"::notice title={escape_property('kai-gitops: more problems')}::{escape_data(text)}"


def _plain_log(report: Report, token: str) -> list[str]:
    """Everything, as text, where no line is a workflow command."""
    from reconciler.outputs.text_format import render as render_text

    return without_commands(render_text(report, color=False), token).rstrip("\n").split("\n")


def without_commands(text: str, token: str | None = None) -> str:
    """`text` for a GitHub Actions log: inside `::stop-commands::`, so no line of it (a value with a newline
    and `::error::…` in it) runs as a workflow command. Other formats printed beside `github` go through it."""
    token = token or _token()
    while token in text:  # vanishingly unlikely; a token the text contains would end the wrap early
        token = _token()
    return f"::stop-commands::{token}\n{text.rstrip(chr(10))}\n::{token}::\n"


def _token() -> str:
    return secrets.token_hex(16)


def job_summary(report: Report, *, link: Link | None = None, limit: int = SUMMARY_LIMIT) -> str:
    """The Markdown for $GITHUB_STEP_SUMMARY: every problem, cut under the 1 MiB limit with a note."""
    from reconciler.outputs.markdown_format import render as render_markdown

    return render_markdown(report, link=link, limit=limit)


def error_summary(error: InputError, *, link: Link | None = None) -> str:
    """The job summary entry of a run that stopped on an error."""
    from reconciler.outputs.markdown_format import render_error as markdown_error

    return markdown_error(error, link=link)


def blob_link(server: str, repository: str, commit: str) -> Link:
    """file:line links to the checked commit, from the workflow's GITHUB_SERVER_URL/REPOSITORY/SHA."""
    base = f"{server.rstrip('/')}/{repository}/blob/{commit}/"
    return lambda path, line: base + path + (f"#L{line}" if line else "")
