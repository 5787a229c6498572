"""One module per output format, behind one registry: `FORMATS`, a table of `OutputFormat` entries.

A new format is an entry here, naming its renderer (`render(report, *, color=None) -> str`, usually in a
module `<name>_format.py` beside this file) and what it can do: a whole document that needs stdout or its
file to itself, an error-only form a CI step reads when the run stopped before it had a report
(`input_error.py`), a form of `reconcile`'s plan and apply (`plan_views.py`), and GitHub's log and job
summary. The `-o` option, its help, the destinations, `reconcile` and docs/outputs.md's table read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from reconciler.core.lazy import LazyRef

if TYPE_CHECKING:  # the CLI reads FORMATS at start-up: importing the report model here would slow every run
    from reconciler.outputs.input_error import InputError
    from reconciler.outputs.plan_views import PlanRun
    from reconciler.report.report import Report


class Renderer(Protocol):
    def __call__(self, report: Report, *, color: bool | None = None) -> str: ...


class ErrorRenderer(Protocol):
    def __call__(self, error: InputError) -> str: ...


class RunRenderer(Protocol):
    def __call__(self, run: PlanRun, *, color: bool | None = None) -> str: ...


class StdoutGuard(Protocol):
    def __call__(self, text: str) -> str: ...


@dataclass(frozen=True)
class OutputFormat:
    name: str
    summary: str  # one line: what it is and who reads it
    render: LazyRef[Renderer]
    whole_document: bool = False  # alone on stdout (or in a file): two documents parse as neither
    colors: bool = False  # coloured when printed to a terminal
    render_error: LazyRef[ErrorRenderer] | None = None  # the form of a run that stopped before its report
    render_run: LazyRef[RunRenderer] | None = None  # reconcile's plan and apply; None: the final report's findings
    guard_stdout: LazyRef[StdoutGuard] | None = None  # on stdout, what the other formats' stdout text passes through
    step_summary: bool = False  # also appends its summary to $GITHUB_STEP_SUMMARY


def _here(module: str, attribute: str) -> str:
    return f"reconciler.outputs.{module}:{attribute}"


_TABLE = (
    OutputFormat(
        "text",
        "the human report: a Terraform-style plan of drift, the violations, NVCA's verdict",
        LazyRef(_here("text_format", "render")),
        colors=True,
        render_run=LazyRef(_here("plan_views", "as_text")),
    ),
    OutputFormat(
        "json",
        "the versioned JSON report (schemaVersion 1), for scripts and dashboards",
        LazyRef(_here("json_format", "render")),
        whole_document=True,
        render_run=LazyRef(_here("plan_views", "as_json")),
    ),
    OutputFormat(
        "jsonl",
        "the JSON report on one line, for a container's log",
        LazyRef(_here("jsonl_format", "render")),
        whole_document=True,
        render_run=LazyRef(_here("plan_views", "as_jsonl")),
    ),
    OutputFormat(
        "sarif",
        "SARIF 2.1.0 for code scanning (GitHub, GitLab, IDEs)",
        LazyRef(_here("sarif_format", "render")),
        whole_document=True,
        render_error=LazyRef(_here("sarif_format", "render_error")),
    ),
    OutputFormat(
        "github",
        "GitHub Actions annotations, the changed lines first; the log beside them kept inert",
        LazyRef(_here("github_format", "render")),
        render_error=LazyRef(_here("github_format", "render_error")),
        guard_stdout=LazyRef(_here("github_format", "without_commands")),
        step_summary=True,
    ),
    OutputFormat(
        "gitlab",
        "a GitLab Code Quality report",
        LazyRef(_here("gitlab_format", "render")),
        whole_document=True,
        render_error=LazyRef(_here("gitlab_format", "render_error")),
    ),
    OutputFormat(
        "junit",
        "JUnit XML, one test case per rule and cluster, for CI test tabs",
        LazyRef(_here("junit_format", "render")),
        whole_document=True,
        render_error=LazyRef(_here("junit_format", "render_error")),
    ),
    OutputFormat(
        "markdown",
        "Markdown for a pull request comment or an issue",
        LazyRef(_here("markdown_format", "render")),
        render_error=LazyRef(_here("markdown_format", "render_error")),
        render_run=LazyRef(_here("plan_views", "as_markdown")),
    ),
)
FORMATS: Mapping[str, OutputFormat] = {entry.name: entry for entry in _TABLE}

if TYPE_CHECKING:  # mypy checks every renderer the table names against its protocol (tests/project/test_registries.py)
    from reconciler.outputs import (
        github_format,
        gitlab_format,
        json_format,
        jsonl_format,
        junit_format,
        markdown_format,
        plan_views,
        sarif_format,
        text_format,
    )

    _RENDERERS: tuple[Renderer, ...] = (
        text_format.render,
        json_format.render,
        jsonl_format.render,
        sarif_format.render,
        github_format.render,
        gitlab_format.render,
        junit_format.render,
        markdown_format.render,
    )
    _ERROR_RENDERERS: tuple[ErrorRenderer, ...] = (
        sarif_format.render_error,
        github_format.render_error,
        gitlab_format.render_error,
        junit_format.render_error,
        markdown_format.render_error,
    )
    _RUN_RENDERERS: tuple[RunRenderer, ...] = (
        plan_views.as_text,
        plan_views.as_json,
        plan_views.as_jsonl,
        plan_views.as_markdown,
    )
    _STDOUT_GUARDS: tuple[StdoutGuard, ...] = (github_format.without_commands,)


def output_format(fmt: str) -> OutputFormat:
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r}")
    return FORMATS[fmt]


def render(report: Report, fmt: str, *, color: bool | None = None) -> str:
    # The last net before any format: free text from the cluster is redacted as it is read, this catches
    # what a check or a policy put into a message from anywhere else.
    return output_format(fmt).render.load()(report.redacted(), color=color)


def render_run(run: PlanRun, fmt: str, *, color: bool | None = None) -> str:
    """`reconcile`'s run in `fmt`: its plan and apply where the format has a form of them, else the findings of
    the run's final report (the re-read after an apply)."""
    entry = output_format(fmt)
    if entry.render_run is None:
        return render(run.final, fmt, color=color)
    return entry.render_run.load()(run.redacted(), color=color)


def render_error(error: InputError, fmt: str) -> str | None:
    """The error-only form of `fmt`, or None for a format that has none (text, json, jsonl)."""
    renderer = output_format(fmt).render_error
    return None if renderer is None else renderer.load()(error)
