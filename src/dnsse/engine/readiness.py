"""Which agents can take the next step, kept up to date instead of found by testing every wait at every step.

With 64 ranks most agents are parked at a scheduling point with nothing to
wait for, or blocked in a collective that only its last member can
complete; testing each agent's wait at each step made the scheduler's
share of a step grow with the number of agents. Here each active agent
has a standing:

- ``ENABLED``: it can run: it waits for nothing, or its wait's signal fired;
- ``ASLEEP``: its wait names a :class:`~dnsse.engine.agent.Signal` that has
  not fired, so it cannot run (the wait's promise) and is not tested;
- ``SCANNED``: any other wait; tested at every step, as every wait was.

An agent's standing changes only when its wait is set (``Agent.waiting``'s
setter tells this table), when a signal fires, and when the agent ends, so
the agents offered at a step, and their order (by id, the order they were
created in), are those a test of every wait would give. A wait whose
``ready`` became true without its signal firing would break that promise:
before a deadlock is reported, :meth:`Readiness.broken_promises` tests the
sleepers, so such a wait is never taken for a deadlock.

``INCREMENTAL = False`` (for tests) makes every agent ``SCANNED``: the full
test of every wait at every step.
"""

from __future__ import annotations

from bisect import insort
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dnsse.engine.agent import Agent, Signal, Wait

ENABLED, SCANNED, ASLEEP, GONE = range(4)

INCREMENTAL = True


def _agent_id(agent: Agent) -> int:
    return agent.id


class Readiness:
    """The standing of every active agent of one execution."""

    __slots__ = ("enabled", "scanned", "live", "incremental")

    def __init__(self) -> None:
        # Ids of the ENABLED agents, ascending.
        self.enabled: list[int] = []
        # The SCANNED agents, by ascending id.
        self.scanned: list[Agent] = []
        # How many active agents are not daemons: with none left, the run is complete.
        self.live = 0
        self.incremental = INCREMENTAL

    def add(self, agent: Agent, agent_id: int) -> None:
        """A new agent (it has the highest id), waiting for nothing yet."""
        if self.incremental:
            agent.standing = ENABLED
            self.enabled.append(agent_id)
        else:
            agent.standing = SCANNED
            self.scanned.append(agent)
        if not agent.daemon:
            self.live += 1

    def changed(self, agent: Agent) -> None:
        """``agent``'s wait was set."""
        new = self._standing_for(agent._waiting)
        old = agent.standing
        if new == old and new != ASLEEP:
            return
        self._remove(agent, old)
        self._put(agent, new)

    def wake(self, sleepers: list[Agent]) -> None:
        """The signal ``sleepers`` slept on fired: they can run."""
        enabled = self.enabled
        for agent in sleepers:
            agent.standing = ENABLED
            agent.asleep_on = None
        if len(sleepers) == 1:
            insort(enabled, sleepers[0].id)
        else:
            enabled.extend(agent.id for agent in sleepers)
            enabled.sort()

    def leave(self, agent: Agent) -> None:
        """``agent`` ended."""
        self._remove(agent, agent.standing)
        agent.standing = GONE
        if not agent.daemon:
            self.live -= 1

    def scan(self) -> tuple[list[int], list[Agent]]:
        """The ids of the agents that can run, ascending, and the agents whose timed wait may expire."""
        scanned = self.scanned
        if not scanned:
            return self.enabled.copy(), []
        extra: list[int] = []
        expiring: list[Agent] = []
        for candidate in scanned:
            waiting = candidate._waiting
            if waiting is None or waiting.ready():
                extra.append(candidate.id)
            elif waiting.expiry is not None:
                expiring.append(candidate)  # a timed wait: the engine decides whether it may expire now
        if not extra:
            return self.enabled.copy(), expiring
        if self.enabled:
            extra += self.enabled
            extra.sort()
        return extra, expiring

    def broken_promises(self, active: list[Agent]) -> bool:
        """Sleepers whose wait is ready though its signal never fired (a lost wake-up): scanned from now on."""
        broken = [
            agent for agent in active
            if agent.standing == ASLEEP and agent._waiting is not None and agent._waiting.ready()
        ]
        for agent in broken:
            self._remove(agent, ASLEEP)
            self._put(agent, SCANNED)
        return bool(broken)

    def _standing_for(self, wait: Wait | None) -> int:
        if not self.incremental:
            return SCANNED
        if wait is None:
            return ENABLED
        signal = wait.signal
        if signal is None or wait.expiry is not None:
            return SCANNED
        return ENABLED if signal.fired else ASLEEP

    def _remove(self, agent: Agent, standing: int) -> None:
        if standing == ENABLED:
            self.enabled.remove(agent.id)
        elif standing == SCANNED:
            self.scanned.remove(agent)
        elif standing == ASLEEP:
            signal: Signal = agent.asleep_on  # type: ignore[assignment]
            signal.sleepers.remove(agent)  # type: ignore[union-attr]
            agent.asleep_on = None

    def _put(self, agent: Agent, standing: int) -> None:
        agent.standing = standing
        if standing == ENABLED:
            insort(self.enabled, agent.id)
        elif standing == SCANNED:
            insort(self.scanned, agent, key=_agent_id)
        else:
            signal: Signal = agent._waiting.signal  # type: ignore[union-attr, assignment]
            if signal.sleepers is None:
                signal.sleepers = [agent]
            else:
                signal.sleepers.append(agent)
            agent.asleep_on = signal
