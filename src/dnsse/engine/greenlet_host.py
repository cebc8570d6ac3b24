"""Agents that share one OS thread and switch as greenlets.

A switch between OS threads is a handoff through the kernel (8-22 us here);
a greenlet switch is about 1 us. When an execution's agents may share a
thread (see :func:`agents_share_a_thread`), the :class:`GreenletHost` runs
them all in one OS thread (kept for the next execution: :mod:`host_thread`):
the agent that reaches a scheduling point runs the scheduler, as before, and
switches straight to the greenlet of the agent chosen. Everything CPython keeps per thread is swapped at each
switch (:mod:`dnsse.engine.thread_state`), so every agent sees the thread
it would have had to itself.

The host's own greenlet (the hub) starts the run, takes over when an
agent's greenlet ends (to run the next agent), and at the end unwinds the
agents still parked. The thread that called :meth:`Execution.run` keeps
the wall clock as before: an agent stuck in a call dnsse does not control
holds the whole host, so the run is given up as inconclusive and each
agent's place is read from its greenlet's frame.

``DNSSE_AGENT_THREADS=os`` keeps every agent on an OS thread of its own.
"""

from __future__ import annotations

import _thread
import os
from typing import Protocol

from dnsse.engine import host_thread, thread_state
from dnsse.engine.agent import ThreadAgent, by_thread
from dnsse.engine.limits import Limits
from dnsse.engine.run_wait import acquire_within

try:
    import greenlet as _greenlet_module
except ImportError:  # pragma: no cover - greenlet is a dependency; without it agents keep OS threads
    _greenlet_module = None  # type: ignore[assignment]

SWITCH_VARIABLE = "DNSSE_AGENT_THREADS"


def agents_share_a_thread(wanted: bool) -> bool:
    """Whether an execution whose framework allows it (``wanted``) runs its agents as greenlets."""
    if not wanted or _greenlet_module is None:
        return False
    if os.environ.get(SWITCH_VARIABLE, "").strip().lower() == "os":
        return False
    return thread_state.available()


class HostedExecution(Protocol):
    """What a :class:`GreenletHost` asks of the execution whose agents it runs (:class:`~dnsse.engine.execution.Execution`).

    The execution owns the host, so the host knows it only by these questions.
    """

    limits: Limits
    aborted: bool
    completed: bool
    # The agent that held the host when the wall clock ran out, if it never came back.
    stuck: ThreadAgent | None

    def first_agent(self) -> ThreadAgent | None:
        """The first thread agent to run; ``None`` when the run is already over."""

    def thread_agents(self) -> list[ThreadAgent]:
        """Every thread agent of the execution, to unwind those still parked."""

    def give_up(self) -> None:
        """The wall clock ran out: end the run as inconclusive (or a hang)."""

    def break_down(self, error: BaseException) -> None:
        """dnsse itself failed in the host thread: the execution must not pass."""


class GreenletHost:
    """The OS thread of an execution's agents, and the switches between them."""

    def __init__(self, execution: HostedExecution) -> None:
        self.execution = execution
        self._state: thread_state.ThreadState | None = None
        self._hub: object = None
        # The host thread's ident: which agent runs there is set at each switch (dnsse.engine.agent.by_thread).
        self._ident = 0
        # The agent a finishing agent chose to run next: the hub switches to it.
        self._after: ThreadAgent | None = None
        # Released when the host thread is done (the run over, every agent unwound).
        self.done = _thread.allocate_lock()
        self.done.acquire()

    def run(self) -> None:
        """Run the execution in a host thread; wait for it here, under the wall-clock limit."""
        host = host_thread.take()
        host.run(self._main)
        # Waiting for the host's end, not for the outcome: woken at the outcome, this thread
        # would take the interpreter lock from the unwinding host for a whole switch interval.
        execution = self.execution
        limits = execution.limits
        if acquire_within(self.done, limits.max_seconds):
            self.done.release()
            host_thread.give_back(host)
            return
        if not (execution.aborted or execution.completed):
            execution.give_up()
        # The rest is unwinding; an agent stuck outside control holds the host for good.
        if execution.stuck is None and acquire_within(self.done, limits.unwind_seconds):
            self.done.release()

    # ------------------------------------------------------------ switching
    def switch(self, current: ThreadAgent, chosen: ThreadAgent) -> None:
        """Run ``chosen`` instead of ``current``; returns when ``current`` is picked again.

        An agent that has not started yet is started by the hub, never from
        ``current``'s greenlet: a greenlet begins at the recursion depth of
        the one that first switches to it, so agents started from agents would
        each start deeper, and a program of a hundred threads would reach
        Python's recursion limit inside dnsse itself.
        """
        if chosen.greenlet is None:
            self._after = chosen
            self._state.switch(current.saved_thread, self._hub)  # type: ignore[union-attr]
            return
        by_thread[self._ident] = chosen
        self._state.switch(current.saved_thread, chosen.greenlet)  # type: ignore[union-attr]

    def finished_with(self, chosen: ThreadAgent) -> None:
        """A finishing agent chose ``chosen``: the hub runs it once the finishing greenlet ends."""
        self._after = chosen

    def _launch(self, agent: ThreadAgent) -> object:
        agent.started = True
        agent.saved_thread = thread_state.Saved()
        agent.greenlet = _greenlet_module.greenlet(lambda: self._run_agent(agent), self._hub)
        return agent.greenlet

    def _run_agent(self, agent: ThreadAgent) -> None:
        # A new agent starts as a new thread would: no locals, no tracer, no running loop.
        self._state.restore(agent.saved_thread)  # type: ignore[union-attr]
        agent.bootstrap()
        # Its thread-locals hold it (the engine's own, for one) where the collector cannot see: let go.
        agent.saved_thread = None

    def _enter(self, agent: ThreadAgent) -> None:
        """From the hub: run ``agent`` until some agent's greenlet ends or an agent not started yet is chosen."""
        state = self._state
        saved = thread_state.Saved()
        state.save(saved)  # type: ignore[union-attr]
        target = agent.greenlet if agent.greenlet is not None else self._launch(agent)
        by_thread[self._ident] = agent
        target.switch()  # type: ignore[attr-defined]
        # An agent's greenlet ended, or an agent asked for one not started yet (it left no agent running here).
        state.restore(saved)  # type: ignore[union-attr]

    # ------------------------------------------------------------- the hub
    def _main(self, host: host_thread.HostThread) -> None:
        execution = self.execution
        try:
            self._state = host.state
            self._state.reset()  # type: ignore[union-attr]
            self._hub = _greenlet_module.getcurrent()
            self._ident = _thread.get_ident()
            by_thread.pop(self._ident, None)
            chosen = execution.first_agent()
            while chosen is not None:
                self._after = None
                self._enter(chosen)
                chosen, self._after = self._after, None
            self._unwind()
        except BaseException as error:  # noqa: BLE001 - dnsse's own failure: the execution must not pass
            # Never again: agents of this execution may still be parked in the thread.
            host.broken = True
            execution.break_down(error)
        finally:
            self.done.release()

    def _unwind(self) -> None:
        """Let every parked agent raise ExecutionAborted and end, one at a time."""
        execution = self.execution
        execution.aborted = True
        for agent in execution.thread_agents():
            greenlet = agent.greenlet
            if greenlet is None or greenlet.dead:  # type: ignore[attr-defined]
                continue
            self._after = None
            self._enter(agent)
