"""Controlled agents: the things the scheduler picks between.

A :class:`ThreadAgent` runs Python code (a rank, a user thread, a Ray worker)
in an OS thread of its own, or as a greenlet in an OS thread that all the
execution's agents share (:mod:`dnsse.engine.greenlet_host`); only the agent
the scheduler picked runs, the others are parked on a lock or suspended. A :class:`StepAgent` is a small state machine
(an async transfer, a message match) whose steps the scheduler runs inline,
with no thread of its own, which keeps async operations cheap.
"""

from __future__ import annotations

import _thread
import sys
from types import FrameType
from typing import TYPE_CHECKING, Callable

from dnsse.engine import agent_threads
from dnsse.engine.operation import START, Operation
from dnsse.engine.running import ExecutionAborted, set_current_agent
from dnsse.engine.thread_frames import frame_of_thread

if TYPE_CHECKING:
    from dnsse.engine.execution import Execution


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

    def __init__(self, execution: Execution, name: str, daemon: bool = False) -> None:
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
        execution: Execution,
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
        execution: Execution,
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
