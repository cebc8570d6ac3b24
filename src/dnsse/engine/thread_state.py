"""What CPython keeps per OS thread, saved and restored so agents can share one.

Greenlets already switch the frame stack, the exception being handled, the
recursion depth and the ``contextvars`` context. What they leave to the
thread, and what an agent would otherwise see of the agent that ran before
it on the same OS thread:

- the thread-state dictionary (``PyThreadState_GetDict``): every
  ``threading.local`` and C ``_thread._local`` keeps its per-thread values
  there, made before control or not, and so do ``repr``'s recursion guard
  and asyncio's running loop;
- asyncio's running loop, which its C module also caches per thread;
- the global trace function (``sys.settrace``): the shared-state and
  coverage tracers of each agent;
- the thread's ``tracing`` depth: an agent switched away from inside its
  tracer (a shared-state point) would leave the next agent with tracing
  suspended, so none of its calls would be traced.

The ``tracing`` depth has no Python API; it is read at its offset in
CPython 3.11's ``PyThreadState`` after checking, in a real trace callback,
that the offset reads what it must (:func:`available` says whether it did).
"""

from __future__ import annotations

import ctypes
import sys
from typing import Callable

# CPython 3.11's PyThreadState: prev, next, interp (3 pointers), then the ints
# _initialized, _static, recursion_remaining, recursion_limit,
# recursion_headroom, tracing.
_TRACING_OFFSET = 3 * 8 + 5 * 4

_thread_state = ctypes.pythonapi.PyThreadState_Get
_thread_state.restype = ctypes.c_void_p
_thread_dict = ctypes.pythonapi.PyThreadState_GetDict
_thread_dict.restype = ctypes.py_object
_incref = ctypes.pythonapi.Py_IncRef
_incref.argtypes = [ctypes.py_object]


def _the_thread_dict() -> dict:
    # ctypes takes a py_object result for a new reference; this one is borrowed, so own it first.
    thread_dict = _thread_dict()
    _incref(thread_dict)
    return thread_dict

# Where asyncio's C module keeps the running loop in the thread-state dictionary.
_LOOP_KEY = "__asyncio_running_event_loop__"
_gettrace = sys.gettrace
_settrace = sys.settrace
_setprofile = sys.setprofile


# The thread-locals saved of an agent that had none: only ever read.
_NO_LOCALS: dict = {}


class Saved:
    """One agent's share of the thread, while another agent runs."""

    __slots__ = ("locals", "tracing", "trace", "loop")

    def __init__(self) -> None:
        self.locals: dict = {}
        self.tracing = 0
        self.trace: Callable | None = None
        self.loop: object = None


class ThreadState:
    """The per-thread state of the OS thread that creates it (it must run all its agents)."""

    __slots__ = ("_locals", "_tracing", "_loops", "_tracing_now", "_trace_now")

    def __init__(self) -> None:
        self._locals: dict = _the_thread_dict()
        self._tracing = ctypes.c_int.from_address(_thread_state() + _TRACING_OFFSET)
        # Whether an agent of this thread ever set a running loop (asyncio.run, a loop's run_forever):
        # until one did, there is no loop to swap, and the C module's per-thread cache is not ours.
        self._loops = False
        # The tracing depth and trace function that the thread has now, as the last save or restore left them:
        # an agent switching to another saves its own and leaves them in place, so an agent switched back to
        # sets only those of its own that differ (see switch).
        self._tracing_now = 0
        self._trace_now: Callable | None = None

    def reset(self) -> None:
        """Leave the thread as a new thread starts: no thread-locals, no tracer, no running loop.

        For a thread that hosts one execution after another (:mod:`dnsse.engine.host_thread`).
        """
        self._locals.clear()
        _settrace(None)
        _setprofile(None)
        if self._loops:
            # The C module's per-thread cache may name the holder just cleared: give it a live one.
            _loop_access()[1](None)

    def save(self, into: Saved) -> None:
        """Keep what the running agent has of the thread."""
        thread_locals = self._locals
        into.locals = dict(thread_locals) if thread_locals else {}
        into.tracing = self._tracing_now = self._tracing.value
        into.trace = self._trace_now = _gettrace()
        if not self._loops and _LOOP_KEY in thread_locals:
            self._loops = True
        # Read only once some agent set a loop: until then the C cache may name a holder already freed.
        into.loop = _loop_access()[0]() if self._loops else None

    def restore(self, saved: Saved) -> None:
        """Give the thread back to the agent that ``saved`` was taken from."""
        thread_locals = self._locals
        if thread_locals or saved.locals:
            if not self._loops and _LOOP_KEY in thread_locals:
                self._loops = True  # set by an agent that ended without switching away
            thread_locals.clear()
            thread_locals.update(saved.locals)
        self._tracing.value = self._tracing_now = saved.tracing
        _settrace(saved.trace)
        self._trace_now = saved.trace
        if self._loops:
            # The C module's per-thread cache still names the loop of the agent that ran before.
            _loop_access()[1](saved.loop)

    def switch(self, saved: Saved, target: object) -> None:
        """From one agent straight to another: :meth:`save` into ``saved``, switch to the greenlet ``target``,
        and :meth:`restore` ``saved`` when some agent switches back.

        The one call of a switch, which sets only what differs: the agent that
        switched back did this too, and left the thread as it saved it
        (``_tracing_now``, ``_trace_now``); the thread-locals are swapped where either agent has some.
        """
        thread_locals = self._locals
        saved.locals = dict(thread_locals) if thread_locals else _NO_LOCALS
        tracing = self._tracing
        saved.tracing = self._tracing_now = tracing.value
        saved.trace = self._trace_now = _gettrace()
        loops = self._loops
        if not loops and _LOOP_KEY in thread_locals:
            self._loops = loops = True
        saved.loop = _loop_access()[0]() if loops else None
        target.switch()  # type: ignore[attr-defined]
        if not self._loops and _LOOP_KEY in thread_locals:
            self._loops = True  # set by an agent that ended without switching away
        if thread_locals or saved.locals:
            thread_locals.clear()
            thread_locals.update(saved.locals)
        if saved.tracing != self._tracing_now:
            tracing.value = self._tracing_now = saved.tracing
        if saved.trace is not self._trace_now:
            _settrace(saved.trace)
            self._trace_now = saved.trace
        if self._loops:
            _loop_access()[1](saved.loop)


_loop_accessors: tuple[Callable[[], object], Callable[[object], None]] | None = None


def _loop_access() -> tuple[Callable[[], object], Callable[[object], None]]:
    """asyncio's getter and setter of the running loop.

    Asked only once an agent set a loop, so asyncio is imported by then; a
    process that never runs one does not import it (~40 ms). Looked up once:
    an import statement at every switch was a fifth of a Ray execution.
    """
    global _loop_accessors
    if _loop_accessors is None:
        from asyncio import events

        _loop_accessors = (events._get_running_loop, events._set_running_loop)
    return _loop_accessors


def _check() -> bool:
    if sys.implementation.name != "cpython" or sys.version_info[:2] != (3, 11):
        return False
    try:
        tracing = ctypes.c_int.from_address(_thread_state() + _TRACING_OFFSET)
    except (AttributeError, ValueError, OSError):
        return False
    seen: list[int] = []

    def probe(frame: object, event: str, arg: object) -> None:
        seen.append(tracing.value)

    outside = tracing.value
    previous = _gettrace()
    _settrace(probe)
    try:
        (lambda: None)()
    finally:
        _settrace(previous)
    return outside == 0 and seen[:1] == [1]


_AVAILABLE: bool | None = None


def available() -> bool:
    """Whether this interpreter's per-thread state can be swapped between agents."""
    global _AVAILABLE
    if _AVAILABLE is None:
        _AVAILABLE = _check()
    return _AVAILABLE
