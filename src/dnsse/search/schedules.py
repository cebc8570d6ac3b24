"""Schedules from ordering constraints between the steps of an observed execution.

Given a recorded execution (its history of steps) and constraints such as
"rank 1's load before rank 0's save_end", :func:`schedule_for` finds an order
of the same steps that keeps everything the observed run fixes (each agent's
program order, an agent's creation before its first step, and the order of
every pair of dependent steps) except the pairs the constraints reorder, and
satisfies every constraint. When no such order exists it returns the cycle
that proves it: a chain of steps that must each come before the next and
that closes on itself.

The order is a guide, not a promise: once a reordered race changes what the
program does, later steps may differ. :class:`~dnsse.search.planned.PlannedChooser`
follows it while the run matches and lets another chooser finish.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Sequence

from dnsse.coverage.feedback import races
from dnsse.engine.operation import Operation

Step = tuple[int, Operation]


@dataclass(frozen=True)
class StepRef:
    """The ``occurrence``-th step (from 1) of ``agent`` whose operation is ``kind``."""

    agent: int
    kind: str
    occurrence: int = 1


@dataclass(frozen=True)
class Constraint:
    """Step ``before`` must come before step ``after`` (positions in the history)."""

    before: int
    after: int


@dataclass(frozen=True)
class Schedule:
    """The agent of every step, in order: what a directed chooser follows."""

    agents: list[int]


@dataclass(frozen=True)
class Unsatisfiable:
    """No order of the observed steps meets the constraints: ``cycle`` must each precede the next."""

    cycle: list[int]

    def explain(self, history: Sequence[Step]) -> str:
        names = [f"agent {history[i][0]}'s {history[i][1].kind} (step {i + 1})" for i in self.cycle]
        return "no schedule exists in the observed partial order: " + " before ".join(names + names[:1])


def locate(history: Sequence[Step], ref: StepRef) -> int | None:
    """The position of ``ref`` in ``history``, or ``None`` when the run has no such step."""
    seen = 0
    for position, (agent, operation) in enumerate(history):
        if agent == ref.agent and operation.kind == ref.kind:
            seen += 1
            if seen == ref.occurrence:
                return position
    return None


def schedule_for(
    history: Sequence[Step], created_at: Sequence[int], constraints: Sequence[Constraint]
) -> Schedule | Unsatisfiable:
    """An order of ``history``'s steps meeting ``constraints``, as close to the observed one as it can be."""
    count = len(history)
    reordered = {(c.after, c.before) for c in constraints} | {(c.before, c.after) for c in constraints}
    successors: list[set[int]] = [set() for _ in range(count)]
    last_of_agent: dict[int, int] = {}
    for position, (agent, _) in enumerate(history):
        previous = last_of_agent.get(agent)
        if previous is not None:
            successors[previous].add(position)
        elif agent < len(created_at) and 0 < created_at[agent] <= position:
            successors[created_at[agent] - 1].add(position)
        last_of_agent[agent] = position
    for race in races(history):
        if (race.first, race.second) not in reordered:
            successors[race.first].add(race.second)
    for constraint in constraints:
        if not (0 <= constraint.before < count and 0 <= constraint.after < count):
            raise ValueError(f"a constraint names a step outside the history of {count} steps: {constraint}")
        successors[constraint.before].add(constraint.after)
    incoming = [0] * count
    for targets in successors:
        for target in targets:
            incoming[target] += 1
    # Kahn's algorithm, always taking the ready step that came first in the observed run.
    ready = [position for position in range(count) if incoming[position] == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        position = heapq.heappop(ready)
        order.append(position)
        for target in successors[position]:
            incoming[target] -= 1
            if incoming[target] == 0:
                heapq.heappush(ready, target)
    if len(order) < count:
        return Unsatisfiable(_cycle(successors, {p for p in range(count) if incoming[p] > 0}))
    return Schedule([history[position][0] for position in order])


def _cycle(successors: list[set[int]], stuck: set[int]) -> list[int]:
    """A cycle among the steps Kahn's algorithm could not order (each has a stuck predecessor)."""
    predecessors: dict[int, int] = {}
    for source in stuck:
        for target in successors[source]:
            if target in stuck:
                predecessors.setdefault(target, source)
    position = min(stuck)
    visited: list[int] = []
    while position not in visited:
        visited.append(position)
        position = predecessors[position]
    cycle = visited[visited.index(position) :]
    cycle.reverse()
    return cycle
