"""OS threads that host the greenlet agents of one execution after another.

Starting an OS thread for an execution and tearing it down again (its thread
state, its greenlets) cost more CPU here than all the scheduling points of a
small program. An idle host thread waits for the next execution instead; the
thread-wide state its previous execution left is cleared first
(:meth:`~dnsse.engine.thread_state.ThreadState.reset`), so an execution
starts in the thread as it would in a new one. A thread whose execution did
not end (an agent stuck outside control holds it) is never taken again.
"""

from __future__ import annotations

import _thread
import os
from typing import Callable

from dnsse.engine import thread_state

_start_new_thread = _thread.start_new_thread


class HostThread:
    """One OS thread that runs the jobs it is given, one at a time."""

    def __init__(self) -> None:
        self._work = _thread.allocate_lock()
        self._work.acquire()
        self._job: Callable[[HostThread], None] | None = None
        # Set by a job that raised: the thread is gone, never to be taken again.
        self.broken = False
        # Made in the thread and kept with it: whether any of its executions set a running loop.
        self.state: thread_state.ThreadState | None = None
        _start_new_thread(self._serve, ())

    def run(self, job: Callable[[HostThread], None]) -> None:
        """Run ``job(self)`` in the thread; returns at once."""
        self._job = job
        self._work.release()

    def _serve(self) -> None:
        self.state = thread_state.ThreadState()
        while True:
            self._work.acquire()
            job, self._job = self._job, None
            job(self)  # type: ignore[misc]


_idle: list[HostThread] = []


def take() -> HostThread:
    """An idle host thread, or a new one."""
    return _idle.pop() if _idle else HostThread()


def give_back(host: HostThread) -> None:
    """``host``'s job ended: it may run the next execution."""
    if not host.broken:
        _idle.append(host)


# A forked child has none of its parent's threads.
os.register_at_fork(after_in_child=_idle.clear)
