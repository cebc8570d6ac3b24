"""Virtual time: ``time.sleep`` is a scheduling point, and clocks read virtual time.

A controlled program never really sleeps. Virtual time advances by each
``sleep`` and jumps to the deadline of a timed wait when it expires (a step
the scheduler may choose whenever the wait is pending), so
``queue.get(timeout=1)`` and ``Condition.wait_for(..., timeout)`` terminate,
and every execution of a schedule reads the same times. Outside an execution
these are the real clocks.

A loop that spins on the clock without ever sleeping or blocking
(``while time.perf_counter() < end: pass``, also with a flag or a
``sleep(0)`` in it) sees time pass by a microsecond a read from its third
read on while nothing else moves time (``runtime.READ_COST``), as a real
read costs time, so it ends as it does without dnsse; the first two reads
see the same time, so a program that reads the clock twice to measure a
stretch of its own code sees it take no time, as a schedule says.
"""

from __future__ import annotations

import time

from dnsse.engine.execution import current_agent
from dnsse.engine.operation import CLOCK, Access, Operation
from dnsse.engine.untraced import untraced
from dnsse.frameworks.threads.runtime import MONOTONIC_BASE, WALL_CLOCK_BASE, runtime_for

real_sleep = time.sleep
real_monotonic = time.monotonic
real_monotonic_ns = time.monotonic_ns
real_perf_counter = time.perf_counter
real_perf_counter_ns = time.perf_counter_ns
real_time = time.time
real_time_ns = time.time_ns

_CLOCK = ((CLOCK, Access.WRITE),)


@untraced
def sleep(seconds: float) -> None:
    agent = current_agent()
    if agent is None:
        real_sleep(seconds)
        return
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    agent.execution.yield_point(agent, Operation("sleep", _CLOCK, f"sleep({seconds:g})"))
    runtime = runtime_for(agent.execution)
    runtime.take_interrupt(agent)
    runtime.advance_to(runtime.elapsed + seconds)


@untraced
def _elapsed() -> float | None:
    agent = current_agent()
    if agent is None:
        return None
    return runtime_for(agent.execution).read_clock(agent)


def monotonic() -> float:
    elapsed = _elapsed()
    return real_monotonic() if elapsed is None else MONOTONIC_BASE + elapsed


def monotonic_ns() -> int:
    elapsed = _elapsed()
    return real_monotonic_ns() if elapsed is None else int((MONOTONIC_BASE + elapsed) * 1e9)


def perf_counter() -> float:
    elapsed = _elapsed()
    return real_perf_counter() if elapsed is None else MONOTONIC_BASE + elapsed


def perf_counter_ns() -> int:
    elapsed = _elapsed()
    return real_perf_counter_ns() if elapsed is None else int((MONOTONIC_BASE + elapsed) * 1e9)


def wall_time() -> float:
    elapsed = _elapsed()
    return real_time() if elapsed is None else WALL_CLOCK_BASE + elapsed


def wall_time_ns() -> int:
    elapsed = _elapsed()
    return real_time_ns() if elapsed is None else int((WALL_CLOCK_BASE + elapsed) * 1e9)
