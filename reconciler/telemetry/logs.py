"""Logs on stderr (stdout is the report): one JSON object per line inside a pod, human text everywhere else.

Every module logs through stdlib `logging` under the `kai_gitops` logger; `configure` installs the one
handler. Each JSON line carries the run id, the cluster and the phase of the run (context variables set by
`run_context` and `phase`), and every message and extra field passes through redaction first, so a
secret that reached a message never reaches the log stack. A message is printed on one line with its control
characters visible (`one_line`), so a value quoted in it cannot forge a line or drive the terminal.
"""

from __future__ import annotations

import contextvars
import logging
import os
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

import orjson

from reconciler.core.printable import visible
from reconciler.core.redact import redact, redact_free_text

LOGGER = "kai_gitops"
FORMATS = ("auto", "json", "text")
# What client-go's rest.InClusterConfig requires: the service's address in the environment and the pod's
# service account token mounted. A CI runner has no token there, whatever its stderr is.
SERVICE_ACCOUNT_TOKEN = Path("/var/run/secrets/kubernetes.io/serviceaccount/token")
_RUN_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("kai_gitops_run_id", default=None)
_CLUSTER: contextvars.ContextVar[str | None] = contextvars.ContextVar("kai_gitops_cluster", default=None)
_PHASE: contextvars.ContextVar[str | None] = contextvars.ContextVar("kai_gitops_phase", default=None)
# LogRecord's own attributes: whatever else a caller passed in `extra=` is written as a field.
_STANDARD = frozenset(logging.makeLogRecord({}).__dict__) | {"message", "asctime", "taskName"}


def one_line(message: str) -> str:
    """A message as a log or error line prints it: its own line breaks and runs of white space one space,
    redacted, and any other control character visible (`\\x1b`), so a value quoted in it can neither start a
    line nor reach the terminal as an escape sequence."""
    return visible(redact_free_text(" ".join(message.split())))


def say(text: str) -> None:
    """A line about what the run did (a fix pull request, a drift issue, a file written) on stderr, made safe
    as `one_line` makes it: the line quotes what a Git host or a repository handed back (URLs, names)."""
    sys.stderr.write(f"kai-gitops: {one_line(text)}\n")
    sys.stderr.flush()


def say_lines(text: str) -> None:
    """Several lines on stderr (a fix's diff), each made safe as `one_line` makes it but its indentation kept."""
    for line in redact_free_text(text).split("\n"):  # whole first: a PEM block spans lines
        sys.stderr.write(visible(line) + "\n")
    sys.stderr.flush()


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


@contextmanager
def run_context(run_id: str, cluster: str | None = None) -> Iterator[None]:
    tokens = (_RUN_ID.set(run_id), _CLUSTER.set(cluster))
    try:
        yield
    finally:
        _CLUSTER.reset(tokens[1])
        _RUN_ID.reset(tokens[0])


def set_cluster(cluster: str | None) -> None:
    """The cluster becomes known only after kai-gitops.yaml is read; later lines carry it."""
    _CLUSTER.set(cluster)


@contextmanager
def phase(name: str) -> Iterator[None]:
    token = _PHASE.set(name)
    try:
        yield
    finally:
        _PHASE.reset(token)


def current() -> dict[str, str | None]:
    return {"runId": _RUN_ID.get(), "cluster": _CLUSTER.get(), "phase": _PHASE.get()}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, run id, cluster, phase, extra fields."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {  # extras may be any object: orjson writes those with str()
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": one_line(record.getMessage()),
            **current(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_") and key not in line:
                line[key] = redact(value)
        if record.exc_info and record.exc_info[1] is not None:
            line["error"] = one_line(f"{type(record.exc_info[1]).__name__}: {record.exc_info[1]}")
        return orjson.dumps(line, default=str).decode()


class TextFormatter(logging.Formatter):
    """`kai-gitops: warning: …` — the shape the tool's one-line errors already have."""

    def format(self, record: logging.LogRecord) -> str:
        level = "" if record.levelno == logging.INFO else f"{record.levelname.lower()}: "
        return f"kai-gitops: {level}{one_line(record.getMessage())}"


class _StderrHandler(logging.StreamHandler[TextIO]):
    """Writes to whatever sys.stderr is at the time (test runners and click swap it)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        super().__init__(stream)
        self._fixed = stream

    @property
    def stream(self) -> TextIO:
        return self._fixed or sys.stderr

    @stream.setter
    def stream(self, value: TextIO | None) -> None:
        pass


def _no_audit_detail(record: logging.LogRecord) -> bool:
    """Per-object audit records are for log stacks; a person reads the summary line that follows them."""
    return record.levelno > logging.INFO or not hasattr(record, "audit")


def in_pod() -> bool:
    """Whether this process runs in a Kubernetes pod, as client-go's in-cluster config decides it."""
    env = os.environ
    return bool(
        env.get("KUBERNETES_SERVICE_HOST") and env.get("KUBERNETES_SERVICE_PORT") and SERVICE_ACCOUNT_TOKEN.is_file()
    )


def _ci_job() -> bool:
    """GitHub Actions, GitLab CI and most others set CI=true; their runners may be pods too."""
    return os.environ.get("CI", "").lower() not in ("", "0", "false")


def resolve_format(fmt: str) -> str:
    """`auto` is JSON for the log stack that collects a pod's stderr, text for the people who read a terminal
    or a CI job's log."""
    if fmt not in FORMATS:
        from reconciler.core.errors import UserError

        raise UserError(f"unknown log format '{fmt}'", hint="use json, text or auto")
    if fmt != "auto":
        return fmt
    return "json" if in_pod() and not _ci_job() else "text"


@contextmanager
def logging_to_stderr(fmt: str = "auto", *, stream: TextIO | None = None, level: int = logging.INFO) -> Iterator[str]:
    """The one kai-gitops handler for the length of a command (removed after, so runs in one process, like
    tests, never share it); yields the format chosen."""
    chosen = resolve_format(fmt)
    logger = logging.getLogger(LOGGER)
    handler = _StderrHandler(stream)
    handler.setFormatter(JsonFormatter() if chosen == "json" else TextFormatter())
    if chosen == "text":
        handler.addFilter(_no_audit_detail)
    previous = logger.level
    logger.addHandler(handler)
    logger.setLevel(level)
    try:
        yield chosen
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)


def error_line(text: str, *, internal: bool = False) -> None:
    """The run's final one-line error, through the handler when one is installed (JSON in a log stack)."""
    logger = logging.getLogger(LOGGER)
    label = "internal error" if internal else "error"
    if any(isinstance(h, _StderrHandler) and isinstance(h.formatter, JsonFormatter) for h in logger.handlers):
        logger.error(text, extra={"event": "run-error", "internal": internal})
    else:
        sys.stderr.write(f"kai-gitops: {label}: {one_line(text)}\n")
        sys.stderr.flush()
