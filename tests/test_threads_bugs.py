"""The threads framework finds the classic threading bugs, and only real ones."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Iterator

import pytest
from helpers import SeededChooser

from dnsse.engine.bugs import BugKind
from dnsse.engine.choices import ReplayChooser
from dnsse.engine.runner import ExecutionResult, run_execution
from dnsse.engine.target import LoadedTarget, TargetSpec
from dnsse.frameworks.threads.framework import ThreadsFramework

PROGRAMS = Path(__file__).parent / "programs"


@pytest.fixture
def framework() -> Iterator[ThreadsFramework]:
    framework = ThreadsFramework()
    with framework.activate():
        yield framework


def load(spec: str) -> LoadedTarget:
    return LoadedTarget(TargetSpec.parse(str(PROGRAMS / spec)))


def run_seeds(framework: ThreadsFramework, spec: str, seeds: int) -> list[ExecutionResult]:
    target = load(spec)
    return [run_execution(target, framework, SeededChooser(seed)) for seed in range(seeds)]


def first_bug(framework: ThreadsFramework, spec: str, seeds: int = 60) -> ExecutionResult:
    target = load(spec)
    for seed in range(seeds):
        result = run_execution(target, framework, SeededChooser(seed))
        if result.bug is not None:
            return result
    raise AssertionError(f"no bug in {spec} over {seeds} seeds")


def test_lock_order_deadlock_names_both_threads_and_both_locks(framework: ThreadsFramework) -> None:
    result = first_bug(framework, "threads_lock_order.py:main")
    bug = result.bug
    assert bug.kind == BugKind.DEADLOCK
    report = "\n".join(bug.details)
    assert "Thread-1 (forward) waits for Lock#2 (created at threads_lock_order.py:6) held by Thread-2 (backward)" in report
    assert "Thread-2 (backward) waits for Lock#1 (created at threads_lock_order.py:5) held by Thread-1 (forward)" in report


def test_lock_order_deadlock_needs_an_unlucky_schedule(framework: ThreadsFramework) -> None:
    results = run_seeds(framework, "threads_lock_order.py:main", 60)
    assert any(r.bug is None for r in results)


def test_lost_update_without_a_lock_is_found_for_some_schedules_only(framework: ThreadsFramework) -> None:
    results = run_seeds(framework, "threads_counter.py:unlocked", 60)
    lost = [r for r in results if r.bug is not None]
    assert lost and len(lost) < len(results)
    assert all(r.bug.kind == BugKind.EXCEPTION and "lost update" in r.bug.message for r in lost)


def test_lost_update_of_a_global_is_found(framework: ThreadsFramework) -> None:
    bug = first_bug(framework, "threads_counter.py:unlocked_global").bug
    assert bug.message == "AssertionError: lost update: total is 1"


def test_counter_under_a_lock_never_reports(framework: ThreadsFramework) -> None:
    results = run_seeds(framework, "threads_counter.py:locked", 200)
    assert [r.bug for r in results if r.bug is not None] == []


def test_check_then_act_on_a_shared_pool_is_found(framework: ThreadsFramework) -> None:
    bug = first_bug(framework, "threads_pool.py:main").bug
    assert bug.kind == BugKind.EXCEPTION
    assert bug.message == "KeyError: 'connection'"
    assert "threads_pool.py\", line 11, in take" in bug.details[0]


def test_notify_before_wait_is_a_lost_wakeup_deadlock(framework: ThreadsFramework) -> None:
    bug = first_bug(framework, "threads_lost_wakeup.py:main").bug
    assert bug.kind == BugKind.DEADLOCK
    assert any(
        "Thread-1 (consumer) waits for a notify of Condition#1 (created at threads_lost_wakeup.py:5)" in line
        for line in bug.details
    )


def test_queue_producer_consumer_never_reports(framework: ThreadsFramework) -> None:
    results = run_seeds(framework, "threads_queue.py:main", 100)
    assert [r.bug for r in results if r.bug is not None] == []
    assert all(r.divergence is None for r in results)


def test_thread_pool_executor_runs_under_control(framework: ThreadsFramework) -> None:
    results = run_seeds(framework, "threads_queue.py:pool", 20)
    assert [r.bug for r in results if r.bug is not None] == []
    assert all(2 <= len(r.agent_names) <= 3 for r in results)  # a worker is spawned only when none is idle


def test_queue_get_with_a_timeout_raises_empty_in_virtual_time(framework: ThreadsFramework) -> None:
    started = time.perf_counter()
    results = run_seeds(framework, "threads_queue.py:timed_get", 5)
    assert [r.bug for r in results] == [None] * 5
    # Five real 5 s timeouts would take 25 s at least: less means none was waited for (not a speed measure).
    assert time.perf_counter() - started < 5 * 5


def test_exception_in_a_worker_reports_its_line(framework: ThreadsFramework) -> None:
    result = run_seeds(framework, "threads_misc.py:failing_worker", 1)[0]
    assert result.bug.kind == BugKind.EXCEPTION
    assert result.bug.agent == "Thread-1 (divide)"
    assert result.bug.message.startswith("ZeroDivisionError")
    assert 'threads_misc.py", line 33, in divide' in result.bug.details[0]


def test_sleep_takes_virtual_time_only(framework: ThreadsFramework) -> None:
    started = time.perf_counter()
    results = run_seeds(framework, "threads_misc.py:sleepy", 3)
    assert [r.bug for r in results] == [None] * 3
    # Three runs of real 30 s sleeps would take 90 s at least: less means none was slept (not a speed measure).
    assert time.perf_counter() - started < 3 * 30


def test_join_with_a_timeout_returns_while_the_thread_still_runs(framework: ThreadsFramework) -> None:
    results = run_seeds(framework, "threads_misc.py:join_with_timeout", 20)
    assert [r.bug for r in results if r.bug is not None] == []


@pytest.mark.parametrize(
    "spec", ["threads_lock_order.py:main", "threads_counter.py:unlocked", "threads_lost_wakeup.py:main"]
)
def test_replaying_the_choices_reproduces_the_bug(framework: ThreadsFramework, spec: str) -> None:
    found = first_bug(framework, spec)
    replayed = run_execution(load(spec), framework, ReplayChooser(found.choices))
    assert replayed.divergence is None
    assert replayed.bug is not None
    assert (replayed.bug.kind, replayed.bug.message) == (found.bug.kind, found.bug.message)
    assert replayed.bug.details == found.bug.details
