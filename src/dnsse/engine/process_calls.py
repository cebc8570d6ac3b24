"""Calls that act on the whole process, made by a program under control.

Ranks, threads and Ray workers are agents: OS threads of one process. Calls
that act on the process cannot mean there what they mean in the real program,
and must neither fail falsely nor escape control:

- ``signal.signal`` from an agent: Python refuses it outside the main thread
  ("signal only works in main thread"), which would be a false bug. The
  handler is recorded for the execution (``Execution.signal_handlers``) and
  ``signal.getsignal`` returns it; it is not installed in the process.
- A new process (``multiprocessing``, ``concurrent.futures.ProcessPoolExecutor``,
  ``os.fork``): its code would run outside control, and a forked copy of a
  controlled process holds parked agents. It is refused as an API dnsse does
  not control (see :mod:`dnsse.engine.uncontrolled`): exit status 2 naming it.

``sys.exit`` needs nothing here: an agent that raises ``SystemExit`` with
status 0 simply finished (see :mod:`dnsse.engine.agent`).
Outside an agent every call is the real one.
"""

from __future__ import annotations

import contextlib
import multiprocessing.process
import os
import signal
from typing import Callable, Iterator

from dnsse.engine.execution import current_agent
from dnsse.engine.uncontrolled import refuse

_real_signal = signal.signal
_real_getsignal = signal.getsignal
_real_process_start = multiprocessing.process.BaseProcess.start
_real_fork = getattr(os, "fork", None)


def _signal(signalnum: int, handler: Callable | int | None) -> object:
    agent = current_agent()
    if agent is None:
        return _real_signal(signalnum, handler)
    handlers = agent.execution.signal_handlers
    previous = handlers.get(signalnum, _real_getsignal(signalnum))
    # Validate as Python would: an unknown signal number is the program's error.
    signal.Signals(signalnum)
    handlers[signalnum] = handler
    return previous


def _getsignal(signalnum: int) -> object:
    agent = current_agent()
    if agent is not None and signalnum in agent.execution.signal_handlers:
        return agent.execution.signal_handlers[signalnum]
    return _real_getsignal(signalnum)


_NEW_PROCESS = (
    "it starts a new process, and dnsse controls the threads of one process, not other processes. Check "
    "the function the processes run, or run that code in threads (threading or "
    "concurrent.futures.ThreadPoolExecutor), which dnsse does control"
)


def _process_start(self: multiprocessing.process.BaseProcess) -> None:
    if current_agent() is None:
        return _real_process_start(self)
    refuse("multiprocessing (a new process started by Process.start, Pool or ProcessPoolExecutor)", _NEW_PROCESS)


def _fork() -> int:
    if current_agent() is None:
        assert _real_fork is not None
        return _real_fork()
    refuse("os.fork", _NEW_PROCESS)


@contextlib.contextmanager
def process_calls_controlled() -> Iterator[None]:
    """Install the replacements above for the time of one execution."""
    signal.signal = _signal  # type: ignore[assignment]
    signal.getsignal = _getsignal  # type: ignore[assignment]
    multiprocessing.process.BaseProcess.start = _process_start  # type: ignore[method-assign]
    if _real_fork is not None:
        os.fork = _fork
    try:
        yield
    finally:
        signal.signal = _real_signal
        signal.getsignal = _real_getsignal
        multiprocessing.process.BaseProcess.start = _real_process_start  # type: ignore[method-assign]
        if _real_fork is not None:
            os.fork = _real_fork
