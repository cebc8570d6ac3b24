"""Calls that act on the whole process, made by a program under control.

Ranks, threads and Ray workers are agents: OS threads of one process. Calls
that act on the process cannot mean there what they mean in the real program,
and must neither fail falsely nor escape control:

- ``signal.signal`` from an agent: Python refuses it outside the main thread
  ("signal only works in main thread"), which would be a false bug in a
  torch rank or a Ray worker, each the main thread of its process in a real
  run. The handler is recorded for the execution
  (``Execution.signal_handlers``) and ``signal.getsignal`` returns it; it is
  not installed in the process. A thread the program started
  (``threading.Thread``, whose handle says ``program_thread``) is not a main
  thread anywhere: there the call raises Python's ``ValueError``.
- A signal sent to the process (``signal.alarm``, ``setitimer``,
  ``raise_signal``, ``os.kill`` of its own pid, ``pthread_kill``) for which
  the program recorded a handler: the real signal would meet the process's
  own disposition (often the default: death), not the program's handler,
  which would be a false ``crash``. It is refused as an API dnsse does not
  control. Without a handler it goes through: the process dies (or ignores
  it) as the real program would.
- A new process (``multiprocessing``, ``concurrent.futures.ProcessPoolExecutor``,
  ``os.fork``): its code would run outside control, and a forked copy of a
  controlled process holds parked agents. It is refused as an API dnsse does
  not control (see :mod:`dnsse.engine.uncontrolled`): exit status 2 naming it,
  unless the framework runs such a process as agents of its own (the ranks a
  torch launcher starts as ``mp.Process``: see ``PROCESS_STARTER``).

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
_real_alarm = signal.alarm
_real_setitimer = signal.setitimer
_real_raise_signal = signal.raise_signal
_real_pthread_kill = signal.pthread_kill
_real_kill = os.kill
# The signal each interval timer raises when it expires.
_TIMER_SIGNALS = {signal.ITIMER_REAL: signal.SIGALRM, signal.ITIMER_VIRTUAL: signal.SIGVTALRM, signal.ITIMER_PROF: signal.SIGPROF}
_HANDLED_SIGNAL = (
    "the program set a handler for this signal, which dnsse records but does not install, so the real signal "
    "would reach the process instead of the handler. Check the code without sending the signal (call the "
    "handler directly where the signal would arrive)"
)


def _signal(signalnum: int, handler: Callable | int | None) -> object:
    agent = current_agent()
    if agent is None:
        return _real_signal(signalnum, handler)
    if getattr(agent.handle, "program_thread", False):
        raise ValueError("signal only works in main thread of the main interpreter")
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


def _refuse_if_handled(signalnum: int, api: str) -> None:
    agent = current_agent()
    if agent is not None and callable(agent.execution.signal_handlers.get(signalnum)):
        refuse(f"{api} with a handler set for {signal.Signals(signalnum).name}", _HANDLED_SIGNAL)


def _alarm(seconds: int) -> int:
    if seconds:
        _refuse_if_handled(signal.SIGALRM, "signal.alarm")
    return _real_alarm(seconds)


def _setitimer(which: int, seconds: float, interval: float = 0.0) -> tuple:
    if seconds:
        _refuse_if_handled(_TIMER_SIGNALS.get(which, signal.SIGALRM), "signal.setitimer")
    return _real_setitimer(which, seconds, interval)


def _raise_signal(signalnum: int) -> None:
    _refuse_if_handled(signalnum, "signal.raise_signal")
    _real_raise_signal(signalnum)


def _pthread_kill(thread_id: int, signalnum: int) -> None:
    if signalnum:
        _refuse_if_handled(signalnum, "signal.pthread_kill")
    _real_pthread_kill(thread_id, signalnum)


def _kill(pid: int, signalnum: int) -> None:
    if signalnum and pid in (0, os.getpid()):
        _refuse_if_handled(signalnum, "os.kill of the program's own process")
    _real_kill(pid, signalnum)


_SENDERS = (
    (signal, "alarm", _alarm, _real_alarm),
    (signal, "setitimer", _setitimer, _real_setitimer),
    (signal, "raise_signal", _raise_signal, _real_raise_signal),
    (signal, "pthread_kill", _pthread_kill, _real_pthread_kill),
    (os, "kill", _kill, _real_kill),
)


_NEW_PROCESS = (
    "it starts a new process, and dnsse controls the threads of one process, not other processes. Check "
    "the function the processes run, or run that code in threads (threading or "
    "concurrent.futures.ThreadPoolExecutor), which dnsse does control"
)


# Set by a framework that runs the processes a program starts as agents (torch's ranks): it starts
# the process, or returns False when it cannot, and the start is refused.
PROCESS_STARTER = "process.start"


def _process_start(self: multiprocessing.process.BaseProcess) -> None:
    agent = current_agent()
    if agent is None:
        return _real_process_start(self)
    starter = agent.execution.framework_state.get(PROCESS_STARTER)
    if callable(starter) and starter(self):
        return None
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
    for module, name, replacement, _ in _SENDERS:
        setattr(module, name, replacement)
    try:
        yield
    finally:
        signal.signal = _real_signal
        signal.getsignal = _real_getsignal
        multiprocessing.process.BaseProcess.start = _real_process_start  # type: ignore[method-assign]
        if _real_fork is not None:
            os.fork = _real_fork
        for module, name, _, original in _SENDERS:
            setattr(module, name, original)
