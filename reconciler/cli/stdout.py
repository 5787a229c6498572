"""The report's stream: writing to stdout, and letting go of it when nobody can take more."""

from __future__ import annotations

import contextlib
import os
import sys

import click


def write_stdout(text: str, *, nl: bool = True) -> None:
    """`text` on stdout; a stdout that cannot take it (a full disk, `> /dev/full`) is a one-line user error.

    A reader that left (BrokenPipeError) is `_guarded`'s to judge. stdout is pointed at /dev/null before the
    error is raised: what is left in its buffer would fail again at the interpreter's final flush."""
    try:
        click.echo(text, nl=nl)
    except BrokenPipeError:
        raise
    except OSError as exc:
        from reconciler.core.errors import UserError

        detach_stdout()
        raise UserError(
            f"cannot write to standard output: {exc.strerror or exc}",
            hint="free space where stdout goes, or redirect it to a file elsewhere "
            "(/dev/null keeps only the exit code)",
        ) from None


def detach_stdout() -> None:
    """Point stdout at /dev/null: the interpreter's final flush then prints no error of its own (a broken
    pipe, a full disk)."""
    with contextlib.suppress(AttributeError, OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
