"""Where rendered reports go: `--output FMT[=PATH]`, repeatable, so one run feeds every consumer.

Every format is rendered before anything is written, so a failure leaves no half set of files. Files are
replaced atomically (a temporary file in the same directory, then rename), so a CI step never uploads a
truncated SARIF; a FIFO or a character device (`/dev/null`) is written in place (core/files.py). Several
formats may go to stdout (`-` or `/dev/stdout`), printed in the order given, as long as none of them is a
whole document (json, jsonl, sarif, gitlab, junit: `whole_document` in the registry): those must be alone on
stdout or go to a file. A format with a `step_summary` (github) also appends its Markdown job summary to
`$GITHUB_STEP_SUMMARY` when it is set. `emit_error` does the same with a run's error when it stopped before it
had a report (`input_error.py`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.core.errors import UserError
from reconciler.core.files import names_stdout, new_file_mode, write_atomically
from reconciler.outputs import FORMATS, render, render_error, render_run
from reconciler.outputs.input_error import InputError
from reconciler.report.report import Report

if TYPE_CHECKING:
    from reconciler.outputs.markdown_format import Link
    from reconciler.outputs.plan_views import PlanRun

STDOUT = "-"


@dataclass(frozen=True)
class OutputSpec:
    format: str
    path: str = STDOUT  # "-" is stdout

    @property
    def to_stdout(self) -> bool:
        return self.path == STDOUT


def parse_output_specs(values: Iterable[str]) -> list[OutputSpec]:
    """`text`, `sarif=r.sarif`, `json=-` … checked together (formats, stdout sharing, one path per format)."""
    specs = []
    for value in values:
        fmt, _, path = value.partition("=")
        fmt = fmt.strip().lower()
        if fmt not in FORMATS:
            raise UserError(f"unknown output format '{fmt}' in '-o {value}'", hint=f"choose from {', '.join(FORMATS)}")
        if "=" in value and not path:
            raise UserError(f"'-o {value}' names no file", hint=f"write -o {fmt}=PATH, or -o {fmt} for stdout")
        # /dev/stdout (/dev/fd/1, a link to one) is "-": printed in order with the other stdout formats, under the
        # same sharing rules
        specs.append(OutputSpec(fmt, STDOUT if not path or names_stdout(path) else path))
    _check_stdout(specs)
    files = [s.path for s in specs if not s.to_stdout]
    duplicate = next((p for p in files if files.count(p) > 1), None)
    if duplicate:
        raise UserError(f"two outputs write the same file {duplicate}", hint="give each format its own PATH")
    return specs


def _check_stdout(specs: list[OutputSpec]) -> None:
    on_stdout = [s.format for s in specs if s.to_stdout]
    whole = [f for f in on_stdout if FORMATS[f].whole_document]
    if whole and len(on_stdout) > 1:
        raise UserError(
            f"{whole[0]} cannot share stdout with {', '.join(f for f in on_stdout if f != whole[0])}",
            hint=f"write it to a file: -o {whole[0]}=PATH",
        )


def check_stdout_streams(specs: list[OutputSpec], streams: Mapping[str, str | None]) -> None:
    """`streams`: the other outputs a command writes, by option (`--plan-out`: PATH). A plan, metrics or
    audit lines sent to stdout are machine-read like json: alone on stdout, or the run is refused before
    it starts (two documents in one stream parse as neither)."""
    named = [option for option, path in streams.items() if path and names_stdout(path)]
    if not named:
        return
    others = [f"the {s.format} report (-o {s.format})" for s in specs if s.to_stdout] + named[1:]
    if others:
        raise UserError(
            f"{named[0]} {streams[named[0]]} cannot share stdout with {', '.join(others)}",
            hint="write all but one of them to a file, e.g. -o json=report.json",
        )


def emit(
    report: Report,
    specs: list[OutputSpec],
    echo: Callable[[str], None],
    *,
    color: bool = False,
    run: PlanRun | None = None,
) -> None:
    """Render every spec, then write files atomically, then print the stdout ones in order.

    `run`: reconcile's plan and apply, rendered by the formats that have a form of it (`report` is its final
    report, which the others render).
    """

    def one(spec: OutputSpec) -> str:
        shade = color and spec.to_stdout and FORMATS[spec.format].colors
        return render(report, spec.format, color=shade) if run is None else render_run(run, spec.format, color=shade)

    rendered = _guarded([(spec, one(spec)) for spec in specs])
    for spec, text in rendered:
        if not spec.to_stdout:
            write_report(Path(spec.path), text)
    if any(FORMATS[spec.format].step_summary for spec in specs):
        append_job_summary(report.redacted())  # as `render` redacts every format
    for spec, text in rendered:
        if spec.to_stdout:
            echo(text)


def _guarded(rendered: list[tuple[OutputSpec, str]]) -> list[tuple[OutputSpec, str]]:
    """A format that guards stdout (github: in an Actions log a line of another format's text could be a
    workflow command) wraps the other formats printed beside it."""
    guards = [guard for spec, _ in rendered if spec.to_stdout and (guard := FORMATS[spec.format].guard_stdout)]
    for guard in dict.fromkeys(guards):
        wrap = guard.load()
        rendered = [
            (spec, wrap(text) if spec.to_stdout and FORMATS[spec.format].guard_stdout != guard else text)
            for spec, text in rendered
        ]
    return rendered


def write_report(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, text, new_file_mode())  # a report is as readable as any file the user writes
    except OSError as exc:
        raise UserError(
            f"cannot write report: {exc.strerror}",
            where=str(path),
            hint="-o FMT=PATH takes a file in a writable directory, a FIFO or a character device",
        ) from None


def emit_error(error: InputError, specs: list[OutputSpec], echo: Callable[[str], None]) -> None:
    """The error-only form of every spec whose format has one, written and printed as `emit` does; the
    other formats write nothing."""
    rendered = [(spec, text) for spec in specs if (text := render_error(error, spec.format)) is not None]
    for spec, text in rendered:
        if not spec.to_stdout:
            write_report(Path(spec.path), text)
    if any(FORMATS[spec.format].step_summary for spec in specs):
        append_error_summary(error)
    for spec, text in rendered:
        if spec.to_stdout:
            echo(text)


# (link to a file at the checked commit or None, bytes left in the summary) -> the Markdown to append
SummaryText = Callable[["Link | None", int], str]


def append_job_summary(report: Report, environ: Mapping[str, str] | None = None) -> Path | None:
    """Append the Markdown job summary to $GITHUB_STEP_SUMMARY, within what is left of its 1 MiB."""
    from reconciler.outputs.github_format import job_summary

    env = os.environ if environ is None else environ
    commit = next((c.git.commit for c in report.clusters if c.git and c.git.commit), None) or env.get("GITHUB_SHA")
    return _append_summary(lambda link, room: job_summary(report, link=link, limit=room), commit, env)


def append_error_summary(error: InputError, environ: Mapping[str, str] | None = None) -> Path | None:
    """Append the run's error to $GITHUB_STEP_SUMMARY, linked to the file at the workflow's commit."""
    from reconciler.outputs.github_format import error_summary

    env = os.environ if environ is None else environ
    return _append_summary(lambda link, _room: error_summary(error, link=link), env.get("GITHUB_SHA"), env)


def _append_summary(text_for: SummaryText, commit: str | None, env: Mapping[str, str]) -> Path | None:
    from reconciler.outputs.github_format import SUMMARY_LIMIT, blob_link

    target = env.get("GITHUB_STEP_SUMMARY")
    if not target:
        return None
    path = Path(target)
    try:
        used = path.stat().st_size if path.exists() else 0
    except OSError as exc:  # a name too long, a parent that is a file
        raise UserError(f"cannot append the job summary: {exc.strerror}", where=target) from None
    link = None
    if env.get("GITHUB_SERVER_URL") and env.get("GITHUB_REPOSITORY") and commit:
        link = blob_link(env["GITHUB_SERVER_URL"], env["GITHUB_REPOSITORY"], commit)
    room = SUMMARY_LIMIT - used - 1
    if room < 1024:  # earlier steps used it up; a stub would only say "truncated"
        return None
    text = text_for(link, room)
    if len(text.encode()) > room:
        return None
    try:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(("\n" if used else "") + text)
    except OSError as exc:
        raise UserError(f"cannot append the job summary: {exc.strerror}", where=target) from None
    return path
