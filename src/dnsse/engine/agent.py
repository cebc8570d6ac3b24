"""Controlled agents: the things the scheduler picks between.

A :class:`ThreadAgent` runs Python code (a rank, a user thread, a Ray worker)
in an OS thread of its own, or as a greenlet in an OS thread that all the
execution's agents share (:mod:`dnsse.engine.greenlet_host`); only the agent
the scheduler picked runs, the others are parked on a lock or suspended. A :class:`StepAgent` is a small state machine
(an async transfer, a message match) whose steps the scheduler runs inline,
with no thread of its own, which keeps async operations cheap.

An agent knows its execution only as an :class:`AgentHost`: the few questions
an agent asks of the scheduler that runs it. The scheduler
(:mod:`dnsse.engine.execution`) is built on agents, never the other way round.
This module also keeps which agent runs on each OS thread
(:func:`current_agent`) and :class:`ExecutionAborted`: both are needed the
moment an agent starts, and living here they cost that start no import (one
per agent was a measurable part of a short execution's cost).
"""

from __future__ import annotations

import _thread
import os
import sys
from types import FrameType
from typing import Callable, Protocol

from dnsse.engine import agent_threads
from dnsse.engine.operation import START, Operation
from dnsse.engine.thread_frames import frame_of_thread

_get_ident = _thread.get_ident


class ExecutionAborted(BaseException):
    """Unwinds an agent whose execution is over (a bug was found, or a limit hit).

    A ``BaseException`` so that the program's own ``except Exception`` does not
    swallow it.
    """


class ReadinessTable(Protocol):
    """What an agent tells its execution's table of who can run (:class:`~dnsse.engine.readiness.Readiness`)."""

    def changed(self, agent: Agent) -> None:
        """``agent``'s wait changed: whether it can run must be asked again."""

    def wake(self, sleepers: list[Agent]) -> None:
        """The signal ``sleepers`` slept on fired: they can run again."""


class AgentHost(Protocol):
    """The execution an agent belongs to, as the agent sees it (:class:`~dnsse.engine.execution.Execution`).

    Only what an agent itself asks: to be registered, to say its wait changed,
    and how its body ended. Code that holds an agent and needs more of the
    scheduler reaches it through the same object.
    """

    readiness: ReadinessTable
    # Installs the program's tracer in an agent's thread as it starts; None when nothing traces.
    trace_hook: Callable[[Callable | None], Callable] | None
    # Called as a thread agent starts or resumes running, before the program's code.
    on_resume: Callable[[ThreadAgent], None] | None

    def register(self, agent: Agent) -> int:
        """Add ``agent`` to the execution; its id."""

    def check_abort(self) -> None:
        """Raise :class:`ExecutionAborted` when the execution is over."""

    def agent_finished(self, agent: ThreadAgent) -> None:
        """``agent``'s body returned (or exited with status 0)."""

    def agent_raised(self, agent: ThreadAgent, error: BaseException) -> None:
        """``agent``'s body raised ``error``: a finding."""

    def break_down(self, error: BaseException) -> None:
        """dnsse itself failed in ``agent``'s thread: the execution must not pass."""


class Wait:
    """Why an agent cannot run, and the test that says when it can.

    ``ready`` is evaluated by the scheduler at each step, so a primitive never
    has to remember to wake anybody (no lost wake-ups in the engine). A wait
    with a ``timeout`` (seconds) has a ``deadline`` on the execution's virtual
    clock (set by :meth:`Execution.block`, as is its ``expiry``, the
    operation of giving up): it expires when the clock passes the deadline,
    or earlier where the scheduler stalls the agents that could run until
    then, within the execution's delay budget (:mod:`dnsse.engine.clock`).
    A wait may also give its deadline as a property that changes while it
    waits (an event loop waiting for its earliest timer).
    """

    __slots__ = ("ready", "describe", "timeout", "expiry", "timed_out", "signal", "deadline")

    def __init__(
        self,
        ready: Callable[[], bool],
        describe: Callable[[], str],
        timeout: float | None = None,
        signal: Signal | None = None,
    ) -> None:
        self.ready = ready
        self.describe = describe
        self.timeout = timeout
        self.expiry: Operation | None = None
        self.timed_out = False
        # A promise: ``ready`` is false until ``signal`` fires and true from then on. The agent
        # then sleeps, untested, until it fires (see dnsse.engine.readiness).
        self.signal = signal
        self.deadline: float | None = None


class Signal:
    """The one event that makes a :class:`Wait` that names it ready (a collective completing, a send matched).

    Whoever makes the wait's ``ready`` true calls :meth:`fire` right then;
    the agents asleep on it can run again (:mod:`dnsse.engine.readiness`).
    """

    __slots__ = ("fired", "sleepers")

    def __init__(self) -> None:
        self.fired = False
        # The agents asleep on it; None while there are none.
        self.sleepers: list[Agent] | None = None

    def fire(self) -> None:
        self.fired = True
        sleepers = self.sleepers
        if sleepers:
            self.sleepers = None
            sleepers[0].execution.readiness.wake(sleepers)


class Agent:
    """Bookkeeping shared by both kinds of agent."""

    __slots__ = ("id", "name", "execution", "done", "_waiting", "pending", "daemon", "frame", "standing", "asleep_on")

    def __init__(self, execution: AgentHost, name: str, daemon: bool = False) -> None:
        self.execution = execution
        self.daemon = daemon
        self._waiting: Wait | None = None
        # Its standing in the execution's readiness table, and the signal it sleeps on (dnsse.engine.readiness).
        self.standing = 0
        self.asleep_on: Signal | None = None
        self.name = name
        self.done = False
        self.pending: Operation = START
        # A thread agent's frame that stopped at its latest scheduling point: where it waits (none for step agents).
        self.frame: FrameType | None = None
        # Last, once built: from here on the scheduler's thread may read it (Execution.register).
        self.id = execution.register(self)

    @property
    def waiting(self) -> Wait | None:
        """Why the agent cannot run now; ``None`` when nothing holds it."""
        return self._waiting

    @waiting.setter
    def waiting(self, wait: Wait | None) -> None:
        self._waiting = wait
        if not self.done:
            self.execution.readiness.changed(self)

    def runnable(self) -> bool:
        if self.done:
            return False
        waiting = self.waiting
        return waiting is None or waiting.ready()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id} {self.name}>"


class StepAgent(Agent):
    """An agent whose steps are plain functions run by the scheduler.

    ``step`` performs one step and returns the wait for the next one, ``None``
    to be runnable again at once, or :data:`FINISHED` when the agent is done.
    """

    __slots__ = ("step",)

    def __init__(
        self,
        execution: AgentHost,
        name: str,
        step: Callable[[], Wait | None | object],
        first_wait: Wait | None = None,
        operation: Operation = START,
    ) -> None:
        self.step = step
        super().__init__(execution, name, daemon=True)
        self.waiting = first_wait
        self.pending = operation


FINISHED = object()


class ThreadAgent(Agent):
    """An agent that runs ``body`` in an OS thread of its own."""

    __slots__ = (
        "body", "_baton", "thread_ident", "started", "exited", "on_start", "handle", "importing",
        "greenlet", "saved_thread", "keeps_thread",
    )

    def __init__(
        self,
        execution: AgentHost,
        name: str,
        body: Callable[[], object],
        daemon: bool = False,
        on_start: Callable[[], None] | None = None,
    ) -> None:
        # Its own fields before Agent.__init__ registers it, where the scheduler may read them.
        self.body = body
        # Held while the agent is parked; released to let it run.
        self._baton = _thread.allocate_lock()
        self._baton.acquire()
        self.thread_ident: int | None = None
        self.started = False
        # Released when the OS thread has left user code for good.
        self.exited = _thread.allocate_lock()
        self.exited.acquire()
        self.on_start = on_start
        # The user-facing object that stands for this agent (a Thread, a rank).
        self.handle: object = None
        # Nesting of the library imports the agent is running: they run without scheduling points.
        self.importing = 0
        # Where the agents share one OS thread (dnsse.engine.greenlet_host): the
        # agent's greenlet, and its share of the thread while it is parked.
        self.greenlet: object = None
        self.saved_thread: object = None
        # Its OS thread may be one kept from an earlier agent, and is kept for a later one
        # (dnsse.engine.agent_threads): only for agents that leave nothing of theirs in it.
        self.keeps_thread = False
        super().__init__(execution, name, daemon=daemon)

    def launch(self) -> None:
        """Start the OS thread; it parks until the scheduler picks it."""
        self.started = True
        agent_threads.start(self._bootstrap, self.keeps_thread)

    def resume(self) -> None:
        self._baton.release()

    def park(self) -> None:
        self._baton.acquire()

    def parked(self) -> bool:
        """Whether the agent's OS thread waits in :meth:`park`: at a scheduling point, not in the program."""
        frame = self.current_frame()
        return frame is not None and frame.f_code is ThreadAgent.park.__code__

    def current_frame(self) -> FrameType | None:
        """The innermost Python frame the agent is at now; ``None`` before it started or after it ended."""
        greenlet = self.greenlet
        if greenlet is not None:
            frame = greenlet.gr_frame  # type: ignore[attr-defined]
            if frame is not None or not greenlet:
                return frame  # parked (or over): the greenlet keeps its frame
        # Running: the frame of its OS thread (shared or its own).
        return frame_of_thread(self.thread_ident) if self.thread_ident is not None else None

    def _bootstrap(self) -> None:
        self.thread_ident = _thread.get_ident()
        self.park()
        try:
            self.bootstrap()
        except BaseException as error:  # noqa: BLE001 - dnsse's own failure: the execution must not pass
            self.execution.break_down(error)

    def bootstrap(self) -> None:
        """Run the agent's body to its end, once the scheduler picked it, and report how it ended."""
        self.thread_ident = _thread.get_ident()
        set_current_agent(self)
        trace_hook = self.execution.trace_hook
        try:
            self.execution.check_abort()
            if trace_hook is not None:
                sys.settrace(trace_hook(None))
            if self.on_start is not None:
                self.on_start()
            if self.execution.on_resume is not None:
                self.execution.on_resume(self)
            self.body()
        except ExecutionAborted:
            pass
        except SystemExit as error:
            # sys.exit() ends a rank's or a driver's process: status 0 (or None) is a normal end.
            if error.code in (0, None):
                self.execution.agent_finished(self)
            else:
                self.execution.agent_raised(self, error)
        except BaseException as error:  # noqa: BLE001 - any escape from user code is a finding
            self.execution.agent_raised(self, error)
        else:
            self.execution.agent_finished(self)
        finally:
            if trace_hook is not None:
                sys.settrace(None)
            set_current_agent(None)
            self.frame = None
            self.exited.release()


# The agent running on each OS thread, by the thread's ident. Not a thread-local: agents
# that share one OS thread as greenlets would each have an entry of their own in the
# thread's state dictionary, which every switch copies in and out
# (dnsse.engine.thread_state); their host sets this entry at each switch instead.
by_thread: dict[int, ThreadAgent] = {}


def current_agent() -> ThreadAgent | None:
    """The agent running on this OS thread, or ``None`` outside control."""
    return by_thread.get(_get_ident())


def set_current_agent(agent: ThreadAgent | None) -> None:
    if agent is None:
        by_thread.pop(_get_ident(), None)
    else:
        by_thread[_get_ident()] = agent


def _forget_other_threads() -> None:
    # A forked child runs only the thread that forked: another thread's ident may come back.
    mine = by_thread.get(_get_ident())
    by_thread.clear()
    if mine is not None:
        by_thread[_get_ident()] = mine


os.register_at_fork(after_in_child=_forget_other_threads)
