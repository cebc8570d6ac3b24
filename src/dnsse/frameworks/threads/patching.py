"""Swap ``threading``, ``time`` and ``queue`` for their controlled versions, and back.

Programs (and the libraries they call) look these names up when they run:
``threading.Lock()`` or a module-level ``from threading import Lock`` executed
in a fresh copy of the target both find the controlled class. ``queue.Queue``
builds its mutex and conditions from ``threading`` at construction, so queues
made under control are controlled with no queue-specific code; only the clock
that ``queue`` bound at import is replaced, so its timeouts use virtual time.
``queue.SimpleQueue`` is C on a real lock, so it is replaced outright.
asyncio gets a policy whose loops are controlled when an agent makes them
(:mod:`.event_loop`). ``concurrent.futures``' module-wide lock is held across
a thread start (a scheduling point), so it is a controlled lock too.

An execution that ends unwinds its agents with ``ExecutionAborted``; library
code that catches ``BaseException`` (a pool worker) logs it, and a callback
of the garbage collector reports it as unraisable. Neither is the program's
doing, so both are kept quiet.
The engine uses ``_thread`` only, so none of this touches the scheduler.
"""

from __future__ import annotations

import asyncio
import concurrent.futures.thread
import contextlib
import datetime
import logging
import queue
import sys
import threading
import time
from typing import Any, Iterator

from dnsse.engine.execution import ExecutionAborted
from dnsse.engine.uncontrolled import Refusal, refused

from dnsse.frameworks.threads import clock, stable_hashes, thread, wall_dates
from dnsse.frameworks.threads.barrier import Barrier
from dnsse.frameworks.threads.condition import Condition
from dnsse.frameworks.threads.event import Event
from dnsse.frameworks.threads.event_loop import ControlledPolicy, ordered_all_tasks
from dnsse.frameworks.threads.lock import Lock, RLock
from dnsse.frameworks.threads.semaphore import BoundedSemaphore, Semaphore
from dnsse.frameworks.threads.simple_queue import SimpleQueue

_REPLACEMENTS = (
    (threading, "Thread", thread.Thread),
    (threading, "Timer", thread.Timer),
    (threading, "Lock", Lock),
    (threading, "RLock", RLock),
    (threading, "Condition", Condition),
    (threading, "Semaphore", Semaphore),
    (threading, "BoundedSemaphore", BoundedSemaphore),
    (threading, "Event", Event),
    (threading, "Barrier", Barrier),
    (threading, "current_thread", thread.current_thread),
    (threading, "main_thread", thread.main_thread),
    (threading, "enumerate", thread.enumerate),
    (threading, "active_count", thread.active_count),
    (threading, "get_ident", thread.get_ident),
    (threading, "get_native_id", thread.get_native_id),
    (time, "sleep", clock.sleep),
    (time, "monotonic", clock.monotonic),
    (time, "monotonic_ns", clock.monotonic_ns),
    (time, "perf_counter", clock.perf_counter),
    (time, "perf_counter_ns", clock.perf_counter_ns),
    (time, "time", clock.wall_time),
    (time, "time_ns", clock.wall_time_ns),
    (queue, "time", clock.monotonic),
    (datetime, "datetime", wall_dates.VirtualDatetime),
    (datetime, "date", wall_dates.VirtualDate),
    (queue, "SimpleQueue", SimpleQueue),
    (concurrent.futures.thread, "_global_shutdown_lock", Lock()),
    # Sets of futures (as_completed, wait) iterate in the same order in every execution.
    *stable_hashes.REPLACEMENTS,
)


_RAW_THREAD = (
    "a thread started with _thread runs outside dnsse's scheduler; start it with threading.Thread, which "
    "dnsse controls"
)
_REFUSED = (
    Refusal("_thread", "start_new_thread", "_thread.start_new_thread", _RAW_THREAD),
    Refusal("_thread", "start_new", "_thread.start_new", _RAW_THREAD),
)


def _not_an_unwinding(record: logging.LogRecord) -> bool:
    return not (record.exc_info and isinstance(record.exc_info[1], ExecutionAborted))


def _quiet_unraisable(previous: Any) -> Any:
    def hook(unraisable: Any) -> None:
        if not isinstance(unraisable.exc_value, ExecutionAborted):
            previous(unraisable)

    return hook


@contextlib.contextmanager
def controlled_threading() -> Iterator[None]:
    """Install the controlled APIs; everything is restored on exit, also on error."""
    saved = [(module, name, getattr(module, name)) for module, name, _ in _REPLACEMENTS]
    saved_policy = asyncio.get_event_loop_policy()
    saved_all_tasks = asyncio.tasks.all_tasks
    saved_unraisable = sys.unraisablehook
    pool_logger = logging.getLogger("concurrent.futures")
    saved_hook = thread.hook_outside[0]
    try:
        thread.hook_outside[0] = threading.excepthook
        for module, name, replacement in _REPLACEMENTS:
            setattr(module, name, replacement)
        asyncio.set_event_loop_policy(ControlledPolicy())
        asyncio.all_tasks = asyncio.tasks.all_tasks = ordered_all_tasks(saved_all_tasks)
        sys.unraisablehook = _quiet_unraisable(saved_unraisable)
        pool_logger.addFilter(_not_an_unwinding)
        with refused(_REFUSED):
            yield
    finally:
        thread.hook_outside[0] = saved_hook
        pool_logger.removeFilter(_not_an_unwinding)
        sys.unraisablehook = saved_unraisable
        asyncio.set_event_loop_policy(saved_policy)
        asyncio.all_tasks = asyncio.tasks.all_tasks = saved_all_tasks
        for module, name, original in reversed(saved):
            setattr(module, name, original)
