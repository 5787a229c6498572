"""regorus Engines that are freed on the thread that made them, wherever the last reference goes.

pyo3 marks `regorus.Engine` "unsendable": dropped on another thread it is not freed but reported ("regoruspy::Engine
is unsendable, but is being dropped on another thread", an unraisable error on stderr). Reference counting frees
an engine where its last user lets go, which is its own thread here; but an engine caught in a reference cycle
(a traceback's frame holding a policy set, say) is freed by the cyclic garbage collector, which runs on
whichever thread happens to allocate -- a cluster-read worker, a Lease renewer, a test's HTTP server. Such an
engine is parked instead, and its own thread frees it the next time it makes one.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import regorus

# owner thread -> engines collected elsewhere. Plain dict and list operations: atomic under the GIL, and a lock
# could deadlock when a collection runs inside code that holds it on the same thread.
_PARKED: dict[int, list[regorus.Engine]] = {}


class OwnedEngine:
    """A regorus Engine with the thread that made it; use `.engine` on that thread only."""

    __slots__ = ("_owner", "engine")

    def __init__(self, engine: regorus.Engine) -> None:
        free_parked()
        self.engine = engine
        self._owner = threading.get_ident()

    def __del__(self) -> None:
        if threading.get_ident() != self._owner:
            _PARKED.setdefault(self._owner, []).append(self.engine)


def free_parked() -> None:
    """Free this thread's engines that were collected on another one."""
    _PARKED.pop(threading.get_ident(), None)


def parked() -> int:
    """How many engines wait for their thread (for tests)."""
    return sum(len(engines) for engines in list(_PARKED.values()))
