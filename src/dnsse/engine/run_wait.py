"""The main thread's wait for a run, in short slices, so that a signal cannot leave a traced agent spinning.

A signal sets the interpreter's "eval breaker", and only the main thread
clears it, by running the Python signal handlers. On CPython 3.11 a thread
with a trace function that starts a function call while the breaker is set
re-enters the call's first instruction again and again: it spins, holding
the interpreter lock, until the main thread has run the handlers. Agents run
on other threads than the main one, with trace functions (the shared-state
points of threads programs, ``--coverage``), while the main thread sleeps on
a lock until the run is over. When the kernel hands the signal to an agent's
thread (a program that presses Ctrl-C on its own process group with
``os.killpg``, or a signal sent while that thread runs), nothing wakes the
main thread, and the run hung until its wall-clock limit, then counted as
inconclusive. Waking every :data:`SLICE_S` runs the handlers within that
time; a run shorter than a slice (most of them) pays nothing.
"""

from __future__ import annotations

import time
from typing import Protocol

# Short enough that a spinning agent loses little, long enough that a long run wakes rarely.
SLICE_S = 0.05


class _Lock(Protocol):
    def acquire(self, blocking: bool = ..., timeout: float = ...) -> bool: ...


def acquire_within(lock: _Lock, timeout: float) -> bool:
    """``lock.acquire(timeout=timeout)``, waking every :data:`SLICE_S` so that the main thread handles signals."""
    if lock.acquire(timeout=min(SLICE_S, timeout)):
        return True
    deadline = time.monotonic() + max(0.0, timeout - SLICE_S)
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        if lock.acquire(timeout=min(SLICE_S, remaining)):
            return True
