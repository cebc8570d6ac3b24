"""How a run goes on where a plan says nothing more: a spinning agent lets the others go first.

Mutation, concolic solving, minimization and a moved preemption all follow
a plan (a recorded prefix, an edited sequence, an order of agents) and then
leave the rest of the run to a plain chooser: the first option (let the
current agent go on), or a random one. Left alone, the first option keeps
an agent that polls a flag (``while not ready: pass``) running forever, so a
correct program ends at the step limit and is reported as a ``timeout``.
:class:`Finish` asks that chooser among the agents that can make progress:
one caught spinning (:mod:`dnsse.engine.spin_watch`) waits for another agent,
which is what it does in a real run, until every runnable agent spins.

It follows the whole history, the planned prefix included, so a chooser
that uses it hands it every step (``follow``) even while the plan answers.
"""

from __future__ import annotations

from typing import Sequence

from dnsse.engine.choices import Chooser
from dnsse.engine.operation import Operation
from dnsse.engine.spin_watch import SpinWatch


class Finish:
    """``then``'s answers, asked only among the runnable agents that are not caught spinning."""

    __slots__ = ("then", "watch")

    def __init__(self, then: Chooser) -> None:
        self.then = then
        self.watch = SpinWatch()

    def follow(self, history: Sequence[tuple[int, Operation]]) -> None:
        """Take in the steps taken so far (call before every scheduling choice, planned or not)."""
        self.watch.follow(history)

    def moving(self, runnable: Sequence[int], operations: Sequence[Operation]) -> list[int]:
        """Indices in ``runnable`` of the agents not caught spinning; all of them when every one spins."""
        return self.watch.moving(runnable, operations) or list(range(len(runnable)))

    def next_agent(
        self, runnable: Sequence[int], current: int | None, step: int, operations: Sequence[Operation]
    ) -> int:
        """The index in ``runnable`` of the agent to run; the history must have been followed."""
        moving = self.moving(runnable, operations)
        if len(moving) == len(runnable):
            return self.then.next_agent(runnable, current, step)
        agents = [runnable[i] for i in moving]
        return moving[self.then.next_agent(agents, current if current in agents else None, step)]

    def next_value(self, kind: str, options: int) -> int:
        return self.then.next_value(kind, options)
