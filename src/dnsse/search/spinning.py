"""Spin detection: an agent that goes round the same loop while nothing is written.

An agent spins (``while not ready: pass``, a try-lock loop, a poll with a
sleep or a timed wait) when it performs an operation (same kind, same
objects, same source line) for the third time, at the same period as the
second time (the same number of its own steps in between: it goes round one
loop), while no step of any agent wrote program state: nothing it could
observe has changed, so going round again cannot make progress. The period
keeps an agent that merely uses one lock three times apart from a spinner;
one line may also perform an operation twice (``s.n = s.n + 1`` loads ``s``
twice). Writes to virtual time do not count (a sleeping poll loop still
spins), nor do synchronization steps (a lock taken and given back changes
nothing the spinner waits for). A loop that only reads shared state over and
over is taken for a spin as well: from outside, it is one.

Priority-based strategies use this to treat a spinning agent as waiting,
which is what it does, instead of letting it starve the agent it waits for.
"""

from __future__ import annotations

from typing import Sequence

from dnsse.engine.operation import CLOCK, Access, Operation


def writes_state(operation: Operation) -> bool:
    """Whether a step performing ``operation`` may change what another step observes."""
    return any(access is Access.WRITE and name != CLOCK for name, access in operation.objects)


class SpinWatch:
    """Follows one execution's history and says which pending operation would spin."""

    __slots__ = ("seen_steps", "writes", "steps_of", "performed")

    def __init__(self) -> None:
        self.seen_steps = 0
        self.writes = 0  # steps so far that wrote program state
        self.steps_of: dict[int, int] = {}  # agent -> its steps so far
        # Agent -> (the write count when its record was started, and per
        # operation since then: the agent's step that last performed it and
        # the period before that, 0 when it was performed once).
        self.performed: dict[int, tuple[int, dict[Operation, tuple[int, int]]]] = {}

    def follow(self, history: Sequence[tuple[int, Operation]]) -> None:
        """Take in the steps of ``history`` not seen yet."""
        for index in range(self.seen_steps, len(history)):
            agent, operation = history[index]
            position = self.steps_of.get(agent, 0) + 1
            self.steps_of[agent] = position
            since, record = self.performed.get(agent, (-1, {}))
            if since != self.writes:
                record = {}
                self.performed[agent] = (self.writes, record)
            last = record.get(operation)
            record[operation] = (position, position - last[0] if last is not None else 0)
            if writes_state(operation):
                self.writes += 1
        self.seen_steps = len(history)

    def spinning(self, agent: int, operation: Operation) -> bool:
        """Whether ``operation`` would take ``agent`` round the same loop again with no write anywhere."""
        since, record = self.performed.get(agent, (-1, {}))
        last = record.get(operation) if since == self.writes else None
        if last is None or last[1] == 0:
            return False
        return self.steps_of[agent] + 1 - last[0] == last[1]
