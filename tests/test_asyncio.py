"""asyncio under control: every task an agent, virtual time, asyncio's primitives unchanged."""

from __future__ import annotations

import subprocess
import sys

from helpers import PROGRAMS, SeededChooser, controlled

from dnsse.engine.bugs import BugKind
from dnsse.engine.choices import ReplayChooser

PROGRAM = "asyncio_programs.py"


def outcomes(function: str, seeds: int = 30) -> list:
    with controlled(f"{PROGRAM}:{function}") as run:
        return [run(SeededChooser(seed)) for seed in range(seeds)]


def test_a_race_across_an_await_is_lost_in_every_schedule_as_on_cpythons_loop() -> None:
    """Both tasks read before either writes back: CPython's first-in first-out ready queue does it every time."""
    results = outcomes("lost_update")
    assert all(r.bug is not None for r in results)
    assert all(r.bug.kind == BugKind.EXCEPTION and "AssertionError" in r.bug.message for r in results)
    plain = subprocess.run(
        [sys.executable, "-c", "import asyncio_programs; asyncio_programs.lost_update()"],
        cwd=PROGRAMS, capture_output=True, text=True, timeout=600,
    )
    assert plain.returncode == 1 and "AssertionError" in plain.stderr


def test_a_race_across_an_await_replays_any_number_of_times_in_one_process() -> None:
    with controlled(f"{PROGRAM}:lost_update") as run:
        found = next(r for r in (run(SeededChooser(seed)) for seed in range(30)) if r.bug is not None)
        replays = [run(ReplayChooser(found.choices)) for _ in range(3)]
    assert all(r.bug is not None and r.bug.message == found.bug.message for r in replays)
    assert all(r.steps == found.steps and r.divergence is None for r in replays)


def test_asyncio_lock_and_task_group_prevent_the_race_in_every_schedule() -> None:
    assert all(r.bug is None for r in outcomes("locked_update"))


def test_queue_condition_and_semaphore_behave_as_in_asyncio() -> None:
    for function in ("queue_pipeline", "condition_and_semaphore"):
        results = outcomes(function, seeds=20)
        assert all(r.bug is None and r.divergence is None for r in results), function


def test_sleep_and_wait_for_run_on_virtual_time_in_time_order() -> None:
    # virtual_time asserts that 90 virtual seconds passed and wait_for fired;
    # sleep_ordering that sleepers wake in the order of their deadlines.
    for function in ("virtual_time", "sleep_ordering"):
        assert all(r.bug is None for r in outcomes(function, seeds=10)), function


def test_tasks_run_in_the_thread_of_their_loop() -> None:
    assert all(r.bug is None for r in outcomes("tasks_see_the_loops_thread", seeds=5))


def test_tasks_that_wait_for_each_other_forever_are_a_deadlock_naming_each_task() -> None:
    result = outcomes("forgotten_event", seeds=1)[0]
    assert result.bug is not None and result.bug.kind == BugKind.DEADLOCK
    report = "\n".join(result.bug.details)
    assert "Task-2 (worker) waits for Event.wait() at asyncio_programs.py:107 in worker" in report
    assert "Task-1 (main) waits for Event.wait() at asyncio_programs.py:111 in main" in report


def test_tasks_left_at_the_end_are_cancelled_in_creation_order_in_every_run() -> None:
    # CPython's all_tasks() iterates a WeakSet in the order of the tasks' addresses, which no
    # schedule decides: asyncio.run's final cancellations (and every step after) would differ
    # between two runs of one schedule. Under control they follow the order of creation.
    results = outcomes("tasks_left_when_main_returns", seeds=5)
    assert all(r.bug is None for r in results), [r.bug.render() for r in results if r.bug]
