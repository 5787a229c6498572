"""Pausing Python's cyclic garbage collector over a burst of allocations that make no reference cycles."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection inside the block; objects are still freed by reference counting.

    Composing a large YAML file allocates a tree of ~300,000 objects that stay alive until it is converted, and
    every few hundred allocations the collector walks the young objects again, each full collection the whole
    tree: on a 5 MB values file composing took 2.8 s with the collector, 0.7 s without. What the readers build
    is kept (the documents) or freed by reference counting; the rare cycle (a recursive alias, which the fast
    reader declines) is collected after the block. A nested block leaves the collector off until the outermost
    one ends. The switch is the process's: of two threads in overlapping blocks, the first to leave turns it on.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


# Allocations between two young-generation collections in a command's process (Python's default is 700).
ONE_RUN_THRESHOLD = 10_000


def tune_for_one_run() -> None:
    """Collect young objects every ONE_RUN_THRESHOLD allocations instead of 700, for a process that runs one command.

    A command builds state that lives until it exits (every cluster's desired state, facts and findings), and at
    the default threshold the collector walks that state again and again: in `check` of 1,000 clusters it ran
    8 full collections and ~1,200 partial ones, 0.81 s in all; at 10,000, no full one and 73 partial, 0.24 s.
    Cycles are still collected, some 10,000 allocations later.
    """
    _, middle, old = gc.get_threshold()
    gc.set_threshold(ONE_RUN_THRESHOLD, middle, old)
