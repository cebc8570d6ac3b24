"""OS threads that run one thread agent after another, kept from one execution to the next.

Where agents keep an OS thread each (torch ranks: see
:mod:`dnsse.engine.greenlet_host`), starting a thread per agent and ending
it cost a 64-rank execution about 60 µs a rank, and the first torch calls
in a new thread more. A thread whose agent ended waits here for the next
agent instead, cleared first as a new thread starts:

- what CPython keeps per thread: thread-locals, tracer, profiler, asyncio's
  running loop (:meth:`~dnsse.engine.thread_state.ThreadState.reset`), and
  a ``threading`` dummy entry for the thread's ident; each agent runs in a
  ``contextvars`` context of its own, empty as a new thread's (decimal's
  context lives there);
- torch's per-thread group-name registry (thread-isolation mode) is emptied
  by the agent itself (a rank's process ends: its groups go), so only agents
  that say so (``keep``: torch's ranks) get a kept thread; any other agent's
  thread ends with it, as before.

The rest of torch's per-thread state (grad and inference modes, autocast,
the torch-function and dispatch mode stacks, forward AD, the dispatch key
sets, saved-tensor hooks) is compared with what the thread had when it was new; a thread that
differs (an agent that called ``torch.set_grad_enabled(False)`` and
returned) ends, as every agent's thread used to. So does a thread whose
agent did not end (stuck outside control: it is never taken again), and
every thread where the interpreter's per-thread state cannot be cleared
(:func:`dnsse.engine.thread_state.available`).
"""

from __future__ import annotations

import _thread
import os
import sys
import threading
from contextvars import Context
from typing import Callable

from dnsse.engine import thread_state

# Bound now: the program's own calls of _thread.start_new_thread are refused
# (see dnsse.frameworks.threads.patching), the engine's never are.
_start_new_thread = _thread.start_new_thread
_get_ident = _thread.get_ident


def _torch_modes() -> tuple | None:
    """torch's per-thread modes in this thread; None where torch is not imported."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    C = torch._C
    return (
        C.is_grad_enabled(),
        torch.is_inference_mode_enabled(),
        C._is_torch_function_enabled(),
        C._len_torch_function_stack(),
        C._len_torch_dispatch_stack(),
        C._is_fwd_grad_enabled(),
        C._is_multithreading_enabled(),
        C._is_view_replay_enabled(),
        torch.is_autocast_enabled("cpu"),
        torch.is_autocast_enabled("cuda"),
        torch.is_autocast_cache_enabled(),
        str(C._dispatch_tls_local_include_set()),
        str(C._dispatch_tls_local_exclude_set()),
        C._autograd._top_saved_tensors_default_hooks(False) is None,
    )


class _Worker:
    """One kept OS thread."""

    __slots__ = ("_go", "_job")

    def __init__(self) -> None:
        self._go = _thread.allocate_lock()
        self._go.acquire()
        self._job: Callable[[], None] | None = None
        _start_new_thread(self._serve, ())

    def run(self, job: Callable[[], None]) -> None:
        self._job = job
        self._go.release()

    def _serve(self) -> None:
        state = thread_state.ThreadState()
        new = _torch_modes()
        while True:
            self._go.acquire()
            job, self._job = self._job, None
            Context().run(job)  # type: ignore[arg-type]
            if _torch_modes() != new:
                return  # torch was imported meanwhile, or the agent left a mode set: end as before
            state.reset()
            dummy = threading._active.get(_get_ident())  # type: ignore[attr-defined]
            if isinstance(dummy, threading._DummyThread):  # type: ignore[attr-defined]
                threading._active.pop(_get_ident(), None)  # type: ignore[attr-defined]
            _idle.append(self)


_idle: list[_Worker] = []


def start(job: Callable[[], None], keep: bool) -> None:
    """Run ``job`` in an OS thread of its own: with ``keep``, a kept one (or a new one to keep), else a new one."""
    if not keep or not thread_state.available():
        _start_new_thread(job, ())
        return
    worker = _idle.pop() if _idle else _Worker()
    worker.run(job)


# A forked child has none of its parent's threads.
os.register_at_fork(after_in_child=_idle.clear)
