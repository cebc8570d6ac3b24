"""What every controlled primitive shares: a name, a label, and waiting in two worlds.

Under control (the caller is an agent of an execution) an operation is a
scheduling point, and waiting is an engine :class:`~dnsse.engine.agent.Wait`
that the scheduler re-tests at each step, so no wake-up can be lost by the
primitive itself. Outside control (a library thread, the test runner) the same
object behaves like the real primitive, with real blocking on ``_thread``
locks. Both worlds share one state, so a primitive created during a campaign
by a library (logging's module lock) keeps working before, during and after
executions. ``threading`` objects are never used here: they are what we replace.
"""

from __future__ import annotations

import _thread
import itertools
from typing import Callable, TypeVar

from dnsse.engine.agent import ThreadAgent, Wait
from dnsse.engine.execution import ExecutionAborted, current_agent
from dnsse.engine.operation import Access, Operation
from dnsse.frameworks.threads.clock import real_monotonic
from dnsse.frameworks.threads.runtime import ends_waits, runtime_for

T = TypeVar("T")

_uncontrolled_numbers = itertools.count(1)


def block_until(
    agent: ThreadAgent,
    operation: Operation,
    ready: Callable[[], bool],
    describe: Callable[[], str],
    timeout: float | None,
) -> bool:
    """Park ``agent`` until ``ready()``; ``False`` when ``timeout`` (virtual seconds) expired.

    The wait expires when virtual time reaches its deadline, or earlier where
    the scheduler stalls the agents that could run (see dnsse.engine.clock).
    """
    runtime = runtime_for(agent.execution)
    interrupt_of = runtime.interrupt_of
    if interrupt_of is not None:
        # A killed worker ends any wait; a KeyboardInterrupt (ray.cancel) is raised only once the wait
        # ends (see runtime.ends_waits).
        waited_for = ready

        def ready() -> bool:
            return ends_waits(interrupt_of(agent, False)) or waited_for()

    arrived = agent.execution.block(agent, Wait(ready, describe, timeout), operation)
    runtime.take_interrupt(agent)
    return arrived


def owner_identity() -> object:
    """Who owns what the caller acquires (an ``RLock``): its agent, or its OS thread outside control.

    Not ``_thread.get_ident()``: agents that share one OS thread (greenlets) share its ident.
    """
    agent = current_agent()
    return agent if agent is not None else _thread.get_ident()


def holder_name() -> str:
    """Who the calling thread is, as deadlock reports name it."""
    agent = current_agent()
    if agent is not None:
        return agent.name
    return f"an uncontrolled thread (ident {_thread.get_ident()})"


class Primitive:
    """Base of the controlled primitives; ``kind`` names them in reports (``Lock#2``)."""

    kind = "Primitive"

    def __init__(self) -> None:
        # Guards the state against uncontrolled threads; never held across a
        # scheduling point.
        self._guard = _thread.allocate_lock()
        self._sleepers: list[_thread.LockType] = []
        agent = current_agent()
        if agent is None:
            number = next(_uncontrolled_numbers)
            self._name = f"{self.kind.lower()}#u{number}"
            self._label = f"{self.kind}#u{number}"
            return
        runtime = runtime_for(agent.execution)
        number = runtime.number(self.kind)
        site = runtime.creation_site()
        self._name = f"{self.kind.lower()}#{number}"
        self._label = f"{self.kind}#{number}" + (f" (created at {site})" if site else "")

    def _operation(self, kind: str, access: Access = Access.SYNC) -> Operation:
        return Operation(kind, ((self._name, access),), self._label)

    def _point(self, agent: ThreadAgent, kind: str, access: Access = Access.SYNC) -> None:
        agent.execution.yield_point(agent, self._operation(kind, access))

    def _change_at_point(
        self, agent: ThreadAgent, kind: str, change: Callable[[], T], access: Access = Access.SYNC
    ) -> T:
        """A state change (a release) that happens at a scheduling point.

        When the run ends while the agent waits here, the change is still made
        as the agent unwinds: a primitive that outlives the execution (a
        library's module-level lock) must not stay held by a dead thread.
        """
        try:
            self._point(agent, kind, access)
        except ExecutionAborted:
            with self._guard:
                try:
                    change()
                except Exception:  # noqa: BLE001 - the run is over; its errors no longer matter
                    pass
            raise
        with self._guard:
            return change()

    def _acquire(
        self,
        kind: str,
        ready: Callable[[], bool],
        try_take: Callable[[], bool],
        describe: Callable[[], str],
        blocking: bool,
        timeout: float | None,
    ) -> bool:
        """Take the primitive once ``ready()``; ``try_take`` checks and takes under the guard."""
        agent = current_agent()
        if agent is None:
            return self._wait_uncontrolled(try_take, timeout if blocking else 0.0)
        operation = self._operation(kind)
        if not blocking or (timeout is not None and timeout <= 0):
            agent.execution.yield_point(agent, operation)
            with self._guard:
                return try_take()
        while True:
            if not block_until(agent, operation, ready, describe, timeout):
                return False
            with self._guard:
                if try_take():
                    return True

    def _wait_uncontrolled(self, try_take: Callable[[], bool], timeout: float | None) -> bool:
        deadline = None if timeout is None else real_monotonic() + timeout
        while True:
            with self._guard:
                if try_take():
                    return True
                remaining = -1.0
                if deadline is not None:
                    remaining = deadline - real_monotonic()
                    if remaining <= 0:
                        return False
                sleeper = _thread.allocate_lock()
                sleeper.acquire()
                self._sleepers.append(sleeper)
            sleeper.acquire(True, remaining)
            with self._guard:
                if sleeper in self._sleepers:
                    self._sleepers.remove(sleeper)

    def _wake_uncontrolled(self) -> None:
        """Let uncontrolled waiters re-check the state; call with the guard held."""
        for sleeper in self._sleepers:
            sleeper.release()
        self._sleepers.clear()

    def __repr__(self) -> str:
        return f"<{self._label}>"
