"""``pos``: partial order sampling (Yuan, Yang and Gu, CAV 2018).

Every pending event (the next operation of an agent) carries a random
priority, and the runnable agent whose event has the highest priority runs.
After a step, the priorities of the events that race with it (pending
operations dependent on it, see :mod:`dnsse.search.dependency`) are drawn
again, as is the priority of the stepping agent's next event. Random walk
favours schedules that many interleavings lead to; POS samples partial
orders far more evenly, because the relative order of two independent
events never matters and the order of two racing events is a fresh coin
each time one of them moves.
"""

from __future__ import annotations

import random
from typing import Sequence

from dnsse.engine.operation import Operation
from dnsse.search.dependency import dependent
from dnsse.search.random_walk import blind_value
from dnsse.search.strategy import Strategy, execution_seed


class PosChooser:
    wants_operations = True

    __slots__ = ("rng", "priority", "pending", "seen_steps")

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.priority: dict[int, float] = {}
        # The last pending operation seen for each agent, to find racing events.
        self.pending: dict[int, Operation] = {}
        self.seen_steps = 0

    def next_agent(self, runnable: Sequence[int], current: int | None, step: int) -> int:
        raise TypeError("PosChooser needs the operations of runnable agents (wants_operations)")

    def next_agent_seeing(
        self,
        runnable: Sequence[int],
        current: int | None,
        step: int,
        operations: Sequence[Operation],
        history: Sequence[tuple[int, Operation]],
    ) -> int:
        priorities = self.priority
        if self.seen_steps != len(history):
            pending = self.pending
            for agent, operation in history[self.seen_steps :]:
                # The agent moved on to a new event; events racing with this step get new priorities.
                priorities.pop(agent, None)
                pending.pop(agent, None)
                if pending:
                    for other, waiting in list(pending.items()):
                        if dependent(agent, operation, other, waiting):
                            del priorities[other]
                            del pending[other]
            self.seen_steps = len(history)
        best = 0
        best_priority = -1.0
        for index, agent in enumerate(runnable):
            priority = priorities.get(agent)
            if priority is None:
                priority = priorities[agent] = self.rng.random()
                self.pending[agent] = operations[index]
            if priority > best_priority:
                best, best_priority = index, priority
        return best

    def next_value(self, kind: str, options: int) -> int:
        return blind_value(self.rng, options)


class PosStrategy(Strategy):
    name = "pos"

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def chooser_for(self, execution: int) -> PosChooser:
        return PosChooser(execution_seed(self.seed, execution))

    def observe(self, result: object) -> None:
        """POS samples afresh each execution; it does not learn."""

    def state(self) -> dict:
        """Nothing to save for a resumed campaign: it learns nothing."""
        return {}

    def restore(self, state: dict, rerun: object = None) -> None:
        """Nothing to restore: it learns nothing."""
