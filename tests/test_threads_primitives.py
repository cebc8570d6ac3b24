"""Controlled primitives keep Python's semantics, under control and outside it."""

from __future__ import annotations

import queue
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

import pytest
from helpers import SeededChooser

from dnsse.engine.runner import run_execution
from dnsse.engine.target import LoadedTarget, TargetSpec
from dnsse.frameworks.threads.framework import ThreadsFramework
from dnsse.frameworks.threads.lock import Lock

PROGRAMS = Path(__file__).parent / "programs"
SEMANTICS = [
    "event",
    "semaphore",
    "barrier",
    "barrier_abort",
    "barrier_timeout",
    "rlock",
    "lock_errors",
    "condition_wait_for",
    "current",
    "timer",
    "subclass",
]


@pytest.fixture
def framework() -> Iterator[ThreadsFramework]:
    framework = ThreadsFramework()
    with framework.activate():
        yield framework


@pytest.mark.parametrize("function", SEMANTICS)
def test_program_sees_pythons_semantics_under_every_schedule(framework: ThreadsFramework, function: str) -> None:
    target = LoadedTarget(TargetSpec.parse(f"{PROGRAMS / 'threads_semantics.py'}:{function}"))
    bugs = [run_execution(target, framework, SeededChooser(seed)).bug for seed in range(25)]
    assert [bug.render() for bug in bugs if bug is not None] == []


@pytest.mark.parametrize("function", [f for f in SEMANTICS if f not in ("timer", "barrier_timeout")])
def test_the_same_assertions_hold_in_plain_python(function: str) -> None:
    sys.path.insert(0, str(PROGRAMS))
    try:
        import threads_semantics
    finally:
        sys.path.remove(str(PROGRAMS))
    getattr(threads_semantics, function)()


def test_activation_restores_the_real_apis() -> None:
    originals = (threading.Lock, threading.Thread, time.sleep, time.monotonic, queue.time)
    with ThreadsFramework().activate():
        assert threading.Lock is Lock
        assert time.sleep is not originals[2]
    assert (threading.Lock, threading.Thread, time.sleep, time.monotonic, queue.time) == originals


def test_primitives_work_for_real_threads_outside_an_execution(framework: ThreadsFramework) -> None:
    lock = threading.Lock()
    counts = [0]
    done = threading.Event()
    q: queue.Queue[int] = queue.Queue()

    def worker() -> None:
        for _ in range(1000):
            with lock:
                counts[0] += 1
        q.put(1)
        done.set()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)  # a safety net: the threads end in milliseconds
    assert counts[0] == 4000
    assert done.wait(timeout=1)
    assert sorted(q.get(timeout=1) for _ in range(4)) == [1, 1, 1, 1]


def test_real_blocking_and_timeouts_outside_an_execution(framework: ThreadsFramework) -> None:
    lock = threading.Lock()
    lock.acquire()
    started = time.perf_counter()
    assert lock.acquire(timeout=0.05) is False
    assert time.perf_counter() - started >= 0.04
    cond = threading.Condition()
    with cond:
        assert cond.wait(timeout=0.01) is False
    sem = threading.BoundedSemaphore(1)
    assert sem.acquire() and not sem.acquire(blocking=False)
    sem.release()
    with pytest.raises(ValueError):
        sem.release()


def test_a_library_lock_held_when_a_run_ends_is_released_for_the_next(framework: ThreadsFramework) -> None:
    target = LoadedTarget(TargetSpec.parse(f"{PROGRAMS / 'threads_lock_order.py'}:main"))
    for seed in range(30):
        result = run_execution(target, framework, SeededChooser(seed))
        assert result.bug is None or result.bug.kind == "deadlock"
    shared = threading.Lock()
    assert shared.acquire(timeout=1)
    shared.release()
