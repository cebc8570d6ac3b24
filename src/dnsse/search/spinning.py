"""Spin detection: an agent that repeats an operation while nothing was written.

An agent spins (``while not ready: pass``, a try-lock loop, a poll with a
sleep or a timed wait) when it performs an operation (same kind, same
objects, same source line) for the ``SPIN_REPEATS``-th time while no step of
any agent wrote program state: nothing it could observe has changed, so
running it again cannot make progress. (Twice is not enough: one line may
perform the same operation twice, ``s.n = s.n + 1`` loads ``s`` twice.)
Writes to virtual time do not count (a sleeping poll loop still spins), nor
do synchronization steps (a lock taken and given back changes nothing the
spinner waits for). A loop that only reads shared state over and over is
taken for a spin as well: from outside, it is one.

Priority-based strategies use this to treat a spinning agent as waiting,
which is what it does, instead of letting it starve the agent it waits for.
"""

from __future__ import annotations

from typing import Sequence

from dnsse.engine.operation import CLOCK, Access, Operation

SPIN_REPEATS = 3


def writes_state(operation: Operation) -> bool:
    """Whether a step performing ``operation`` may change what another step observes."""
    return any(access is Access.WRITE and name != CLOCK for name, access in operation.objects)


class SpinWatch:
    """Follows one execution's history and says which pending operation would spin."""

    __slots__ = ("seen_steps", "writes", "performed")

    def __init__(self) -> None:
        self.seen_steps = 0
        self.writes = 0  # steps so far that wrote program state
        # Agent -> (the write count when its tally was started, how often it
        # performed each operation since that many writes).
        self.performed: dict[int, tuple[int, dict[Operation, int]]] = {}

    def follow(self, history: Sequence[tuple[int, Operation]]) -> None:
        """Take in the steps of ``history`` not seen yet."""
        for index in range(self.seen_steps, len(history)):
            agent, operation = history[index]
            since, tally = self.performed.get(agent, (-1, {}))
            if since != self.writes:
                tally = {}
                self.performed[agent] = (self.writes, tally)
            tally[operation] = tally.get(operation, 0) + 1
            if writes_state(operation):
                self.writes += 1
        self.seen_steps = len(history)

    def spinning(self, agent: int, operation: Operation) -> bool:
        """Whether ``operation`` would be ``agent``'s ``SPIN_REPEATS``-th with no write anywhere."""
        since, tally = self.performed.get(agent, (-1, {}))
        return since == self.writes and tally.get(operation, 0) >= SPIN_REPEATS - 1
