"""Telling a hang from a long computation, when an agent stops coming back to scheduling points.

An agent away from every scheduling point past ``--execution-timeout`` is
either blocked in a call dnsse does not control (a read of a pipe nobody
writes, a real OS lock, ``select``) or still computing. The kernel knows
which: a blocked thread uses no CPU time. So the thread's CPU clock is read
across a short window; a thread that used almost none of it is blocked,
and since only one agent runs at a time no other agent could run either:
the program hangs there, as it would in a real run (a ``hang`` bug). One
that computes stays inconclusive: a longer limit decides it.
"""

from __future__ import annotations

import time

# How long the CPU clock of the thread is watched, and the CPU time below which it is taken for blocked.
WINDOW_S = 1.0
BLOCKED_BELOW_S = 0.005
_SLICE_S = 0.05


def blocked_in_the_kernel(thread_ident: int) -> bool:
    """Whether the OS thread ``thread_ident`` (a ``threading.get_ident()``) uses no CPU over :data:`WINDOW_S`.

    ``False`` where the platform cannot tell (no per-thread CPU clocks): the run stays inconclusive.
    """
    try:
        clock = time.pthread_getcpuclockid(thread_ident)
        before = time.clock_gettime(clock)
    except (AttributeError, OSError, OverflowError):
        return False
    end = time.perf_counter() + WINDOW_S
    while time.perf_counter() < end:
        time.sleep(_SLICE_S)
        try:
            used = time.clock_gettime(clock) - before
        except OSError:
            return False  # the thread ended meanwhile: it was not stuck
        if used >= BLOCKED_BELOW_S:
            return False
    return True
