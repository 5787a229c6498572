"""Every command runs under `guard`: one error line instead of a traceback, and an observed run."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from reconciler.cli.stdout import detach_stdout
from reconciler.core.exits import ExitCode


def guard(func: Callable[..., ExitCode]) -> Callable[..., None]:
    """Every failure becomes one line on stderr and exit 1; tracebacks only with KAI_GITOPS_DEBUG=1.

    The run is observed (run id and format for log lines, metrics at the end, failed runs included)."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        from reconciler.cli.settings import check_stdout_sharing, telemetry_settings
        from reconciler.core.errors import UserError
        from reconciler.telemetry.logs import error_line
        from reconciler.telemetry.run import observed_run

        command = func.__name__.removesuffix("_command").replace("_", " ")
        try:
            # Before the run is observed: a refused run must not print its metrics to the stdout it refused.
            check_stdout_sharing(kwargs)
            with observed_run(command, telemetry_settings(kwargs)) as run:
                run.exit_code = code = _guarded(func, args, kwargs, command)
        except UserError as exc:  # the run's own set-up, outside _guarded: a bad $KAI_GITOPS_LOG_FORMAT, stdout shared
            error_line(exc.line())
            code = ExitCode.ERROR
        sys.exit(code)

    return wrapper


def _guarded(func: Callable[..., ExitCode], args: Any, kwargs: Any, command: str) -> ExitCode:
    from reconciler.core.errors import UserError
    from reconciler.telemetry.logs import error_line

    try:
        _check_stdout()
        code = func(*args, **kwargs)
        sys.stdout.flush()
        if _stdout_reader_gone():
            # The reader left before the end (`| head -c 100`): CPython's buffered stdout takes the pipe's
            # partial write without an error and drops the rest, so no BrokenPipeError says so.
            raise BrokenPipeError
        return code
    except UserError as exc:
        error_line(exc.line())
        from reconciler.cli.settings import report_outputs

        if specs := report_outputs(kwargs):  # in CI the error goes where the reviewer looks
            from reconciler.cli.delivery import emit_error

            emit_error(exc, command, specs)
        return ExitCode.ERROR
    except BrokenPipeError:
        if not _stdout_reader_gone():
            raise
        # `kai-gitops … | head`: the reader took what it wanted and left. Quiet, as `cat` is; exit 1 (not the
        # run's own code), because a report that was cut off must never pass for a clean run.
        detach_stdout()
        return ExitCode.ERROR
    except KeyboardInterrupt:
        click.echo("kai-gitops: interrupted", err=True)
        return ExitCode.INTERRUPTED
    except Exception as exc:  # the last line of defence: no traceback reaches an operator
        if os.environ.get("KAI_GITOPS_DEBUG"):
            raise
        from reconciler.core.redact import excerpt

        text = excerpt(str(exc), 300)  # an unknown error may quote a value
        error_line(f"{type(exc).__name__}: {text} (re-run with KAI_GITOPS_DEBUG=1 and report it)", internal=True)
        return ExitCode.ERROR


def _check_stdout() -> None:
    """A command started with stdout closed (`>&-`) has nowhere to put its report: say so before the run."""
    if sys.stdout is None:
        from reconciler.core.errors import UserError

        raise UserError(
            "standard output is closed (started with >&-?): kai-gitops writes its report there",
            hint="redirect it to a file, or to /dev/null to keep only the exit code",
        )


def _stdout_reader_gone() -> bool:
    """Whether stdout is a pipe nobody reads any more (poll reports an error on its write end)."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):
        return False
