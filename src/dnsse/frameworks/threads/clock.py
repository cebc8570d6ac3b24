"""Virtual time: ``time.sleep`` waits on the execution's clock, and clocks read virtual time.

A controlled program never really sleeps. ``sleep(t)`` is a timed wait that
ends when the execution's virtual clock (:mod:`dnsse.engine.clock`) reaches
now + t: while others can run it waits, time passing by their steps; when
none can, time jumps to the earliest deadline; and within the delay budget
the scheduler may stall the others so that it wakes first. So a sleep
orders threads as it does for real, and every execution of a schedule reads
the same times. Outside an execution these are the real clocks.

A loop that spins on the clock without ever sleeping or blocking
(``while time.perf_counter() < end: pass``, also with a flag or a
``sleep(0)`` in it) sees time pass by a microsecond a read from its third
read on while nothing but steps moves time (``runtime.READ_COST``), as a
real read costs time, so it ends as it does without dnsse; the first two
reads see the same time, so a program that reads the clock twice to
measure a stretch of its own code sees it take no time but its steps'.
"""

from __future__ import annotations

import time

from dnsse.engine.agent import Wait
from dnsse.engine.execution import current_agent
from dnsse.engine.operation import CLOCK, Access, Operation
from dnsse.engine.untraced import untraced
from dnsse.frameworks.threads.runtime import MONOTONIC_BASE, WALL_CLOCK_BASE, ends_waits, runtime_for

real_sleep = time.sleep
real_monotonic = time.monotonic
real_monotonic_ns = time.monotonic_ns
real_perf_counter = time.perf_counter
real_perf_counter_ns = time.perf_counter_ns
real_time = time.time
real_time_ns = time.time_ns

_CLOCK = ((CLOCK, Access.WRITE),)


def _never() -> bool:
    return False


@untraced
def sleep(seconds: float) -> None:
    agent = current_agent()
    if agent is None:
        real_sleep(seconds)
        return
    if seconds < 0:
        raise ValueError("sleep length must be non-negative")
    runtime = runtime_for(agent.execution)
    operation = Operation("sleep", _CLOCK, f"sleep({seconds:g})")
    if seconds == 0:
        agent.execution.yield_point(agent, operation)
        runtime.take_interrupt(agent)
        return
    interrupt_of = runtime.interrupt_of
    # A killed worker ends a sleep; ray.cancel's KeyboardInterrupt is raised when it ends (see runtime.ends_waits).
    woken = (lambda: ends_waits(interrupt_of(agent, False))) if interrupt_of is not None else _never
    wake_at = runtime.elapsed + seconds
    agent.execution.block(agent, Wait(woken, lambda: f"its sleep({seconds:g}) to end at t={wake_at:g}s", seconds), operation)
    runtime.take_interrupt(agent)


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
