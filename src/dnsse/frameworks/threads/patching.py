"""Swap ``threading``, ``time`` and ``queue`` for their controlled versions, and back.

Programs (and the libraries they call) look these names up when they run:
``threading.Lock()`` or a module-level ``from threading import Lock`` executed
in a fresh copy of the target both find the controlled class. ``queue.Queue``
builds its mutex and conditions from ``threading`` at construction, so queues
made under control are controlled with no queue-specific code; only the clock
that ``queue`` bound at import is replaced, so its timeouts use virtual time.
``queue.SimpleQueue`` is C on a real lock, so it is replaced outright.
The engine uses ``_thread`` only, so none of this touches the scheduler.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from typing import Iterator

from dnsse.frameworks.threads import clock, thread
from dnsse.frameworks.threads.barrier import Barrier
from dnsse.frameworks.threads.condition import Condition
from dnsse.frameworks.threads.event import Event
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
    (queue, "SimpleQueue", SimpleQueue),
)


@contextlib.contextmanager
def controlled_threading() -> Iterator[None]:
    """Install the controlled APIs; everything is restored on exit, also on error."""
    saved = [(module, name, getattr(module, name)) for module, name, _ in _REPLACEMENTS]
    try:
        for module, name, replacement in _REPLACEMENTS:
            setattr(module, name, replacement)
        yield
    finally:
        for module, name, original in reversed(saved):
            setattr(module, name, original)
