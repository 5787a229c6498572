"""A time and memory budget for Rego the run cannot trust: a pull request's own policies (check without --base).

A comprehension over an unbounded range or a deep recursion in one `.rego` file can take minutes and
gigabytes. Each evaluation runs in a forked child process -- the compiled pack is inherited, nothing is
prepared again -- under an address-space limit (`resource.setrlimit(RLIMIT_AS)`, the process's size at the
fork plus the budget) and a wall-clock timeout after which the child is killed. Exceeding either is one
error naming the policy files, the budget and the option that raises it. Policies read from `--base` (and
every other command's) are the operator's own: they run in process, at full speed.
"""

from __future__ import annotations

import faulthandler
import os
import resource
import select
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass

import orjson

from reconciler.core.errors import UserError

_OK, _USER_ERROR, _NO_MEMORY, _FAILED = b"K", b"U", b"M", b"X"


@dataclass(frozen=True)
class RegoBudget:
    """What one evaluation of untrusted Rego may take; `files` are named when it does not fit."""

    timeout_s: float = 60.0
    memory_mb: int = 2048
    files: tuple[str, ...] = ()

    def error(self, what: str, exceeded: str, option: str) -> UserError:
        return UserError(
            f"{what} exceeded {exceeded}: the pull request's own policies run within a budget when check has no --base",
            where=", ".join(self.files) or None,
            hint=f"look for an unbounded comprehension or recursion; if the policies are right, raise {option}",
        )


def run_within(budget: RegoBudget, what: str, work: Callable[[], bytes]) -> bytes:
    """`work()` run in a forked child under `budget`; its bytes, or the UserError it raised, or a budget error."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's stack
        os.close(read_end)
        _child(budget, work, write_end)
    os.close(write_end)
    try:
        answer, timed_out = _collect(read_end, time.monotonic() + budget.timeout_s)
    finally:
        os.close(read_end)
    if timed_out:
        os.kill(pid, signal.SIGKILL)
    _, status = os.waitpid(pid, 0)
    if timed_out:
        raise budget.error(what, f"its time budget of {budget.timeout_s:g} s", "--policy-timeout")
    return _outcome(budget, what, answer, status)


def _child(budget: RegoBudget, work: Callable[[], bytes], out: int) -> None:
    code = 0
    try:
        _silence()
        _limit_memory(budget.memory_mb)
        message = _OK + work()
    except UserError as exc:
        message = _USER_ERROR + orjson.dumps({"message": exc.message, "where": exc.where, "hint": exc.hint})
    except MemoryError:
        message = _NO_MEMORY
    except BaseException as exc:  # anything else is reported by the parent, never raised here
        message = _FAILED + f"{type(exc).__name__}: {exc}".encode()
    try:
        view = memoryview(message)
        while view:
            view = view[os.write(out, view) :]
    except BaseException:  # the parent sees a short answer and reports it
        code = 1
    finally:
        os._exit(code)


def _silence() -> None:
    """The answer goes through the pipe; a native abort's message and backtrace (Rust prints them on an
    allocation failure) must not reach the run's stderr, which holds one line per error; nor Python's fault
    handler's dump (PYTHONFAULTHANDLER, pytest), which writes to a file descriptor of its own."""
    faulthandler.disable()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    os.close(devnull)


def _limit_memory(memory_mb: int) -> None:
    """Address space: what the process already maps (inherited at the fork) plus the budget."""
    try:
        with open("/proc/self/statm") as statm:
            mapped = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return  # not Linux: the time budget still holds
    limit = mapped + memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _collect(fd: int, deadline: float) -> tuple[bytes, bool]:
    """Everything the child writes until it closes the pipe, or (what came, True) at the deadline."""
    parts: list[bytes] = []
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return b"", True
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(parts), False
        parts.append(chunk)


def _outcome(budget: RegoBudget, what: str, answer: bytes, status: int) -> bytes:
    kind, body = answer[:1], answer[1:]
    if kind == _OK and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return body
    if kind == _USER_ERROR:
        raw = orjson.loads(body)
        raise UserError(raw["message"], where=raw["where"], hint=raw["hint"])
    if kind == _FAILED:
        raise UserError(
            f"{what} failed in its budgeted process: {body.decode(errors='replace')}",
            where=", ".join(budget.files) or None,
        )
    # a MemoryError, or a native allocation failure that aborted the child (regorus is Rust: it aborts)
    raise budget.error(what, f"its memory budget of {budget.memory_mb:,} MB", "--policy-memory")
