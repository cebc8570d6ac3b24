"""``pct``: probabilistic concurrency testing (Burckhardt et al., ASPLOS 2010).

Each agent gets a random priority when it first becomes runnable; the highest
priority runnable agent always runs. At ``depth - 1`` change points, chosen
uniformly among the first ``k`` scheduling choices, the agent about to run
drops below every initial priority. For a program with ``n`` agents and ``k``
choices, a bug of depth ``d`` is found with probability at least
``1 / (n * k ** (d - 1))`` per execution. ``k`` is learnt: the most choices
any execution of the campaign needed so far.

The bound assumes every agent eventually blocks or finishes. A spin loop
(``while not ready: pass``, a retry loop without a wait) breaks that: the
highest-priority agent spins and starves the one it waits for. So an agent
caught spinning (it repeats an operation with no write anywhere in between,
see :mod:`dnsse.engine.spin_watch`) is treated as the waiting agent it is: it
drops below every priority so far. A long-running agent that makes progress
is never touched, so the bound holds for it; each drop is counted
(``spins``) and reported with the campaign.
"""

from __future__ import annotations

import random
from typing import Sequence

from dnsse.engine.operation import Operation
from dnsse.engine.spin_watch import SpinWatch
from dnsse.search.random_walk import blind_value
from dnsse.search.strategy import Strategy, execution_seed

INITIAL_STEP_ESTIMATE = 32
_BELOW_EVERY_PRIORITY = float("-inf")


class PctChooser:
    wants_operations = True

    __slots__ = ("rng", "depth", "priorities", "change_points", "choices_made", "watch", "lowest", "spins")

    def __init__(self, seed: int, depth: int, steps: int) -> None:
        self.rng = random.Random(seed)
        self.depth = depth
        self.priorities: dict[int, float] = {}
        # change point -> the low priority given at it; later points get lower ones.
        points = self.rng.sample(range(1, steps + 1), min(depth - 1, steps))
        self.change_points = {point: float(depth - i) for i, point in enumerate(sorted(points), start=1)}
        self.choices_made = 0
        self.watch = SpinWatch()
        # Spinning agents drop below every change-point priority (all >= 1).
        self.lowest = 1.0
        self.spins = 0  # agents dropped for spinning in this execution

    def next_agent(self, runnable: Sequence[int], current: int | None, step: int) -> int:
        raise TypeError("PctChooser needs the operations of runnable agents (wants_operations)")

    def next_agent_seeing(
        self,
        runnable: Sequence[int],
        current: int | None,
        step: int,
        operations: Sequence[Operation],
        history: Sequence[tuple[int, Operation]],
    ) -> int:
        made = self.choices_made = self.choices_made + 1
        watch = self.watch
        if watch.seen_steps != len(history):
            watch.follow(history)
        best = self._best(runnable)
        lowered = self.change_points.get(made)
        if lowered is not None:
            self.priorities[runnable[best]] = lowered
            best = self._best(runnable)
        # Drop spinning agents until one that can make progress is on top (or all spin).
        drops = len(runnable) - 1
        while drops and watch.spinning(runnable[best], operations[best]):
            drops -= 1
            self.lowest -= 1.0
            self.priorities[runnable[best]] = self.lowest
            self.spins += 1
            best = self._best(runnable)
        return best

    def _best(self, runnable: Sequence[int]) -> int:
        """The index of the runnable agent of highest priority, the first of equals.

        An agent seen for the first time draws its initial priority here, in
        the order of ``runnable``: above every change-point priority (those
        are at most ``depth - 1``).
        """
        priorities = self.priorities
        if len(runnable) == 2:  # the commonest case, without the loop's cost
            first, second = runnable
            first_priority = priorities.get(first)
            if first_priority is None:
                first_priority = priorities[first] = self.depth + self.rng.random()
            second_priority = priorities.get(second)
            if second_priority is None:
                second_priority = priorities[second] = self.depth + self.rng.random()
            return 1 if second_priority > first_priority else 0
        best = 0
        top = _BELOW_EVERY_PRIORITY
        for index, agent in enumerate(runnable):
            priority = priorities.get(agent)
            if priority is None:
                priority = priorities[agent] = self.depth + self.rng.random()
            # Strictly greater: the first of equal priorities wins (as with max()).
            if priority > top:
                best, top = index, priority
        return best

    def next_value(self, kind: str, options: int) -> int:
        return blind_value(self.rng, options)


class PctStrategy(Strategy):
    name = "pct"

    def __init__(self, seed: int, depth: int = 3) -> None:
        if depth < 1:
            raise ValueError("the PCT depth must be at least 1")
        self.seed = seed
        self.depth = depth
        self.steps = INITIAL_STEP_ESTIMATE
        self.spins = 0
        self.executions_with_spins = 0
        self._last: PctChooser | None = None

    def chooser_for(self, execution: int) -> PctChooser:
        self._last = PctChooser(execution_seed(self.seed, execution), self.depth, self.steps)
        return self._last

    def state(self) -> dict:
        """What this strategy learnt, for a resumed campaign (see dnsse.campaign.resume)."""
        return {"steps": self.steps, "spins": self.spins, "executions_with_spins": self.executions_with_spins}

    def restore(self, state: dict, rerun: object = None) -> None:
        """``rerun`` is for strategies that rebuild what they learnt by running executions again; pct needs none."""
        steps = state.get("steps")
        if isinstance(steps, int) and steps >= 1:
            self.steps = steps
        self.spins = int(state.get("spins", 0))
        self.executions_with_spins = int(state.get("executions_with_spins", 0))

    def observe(self, result) -> None:  # type: ignore[no-untyped-def]
        scheduling_choices = sum(1 for choice in result.choices if choice.kind == "agent")
        self.steps = max(self.steps, scheduling_choices)
        if self._last is not None and self._last.spins:
            self.spins += self._last.spins
            self.executions_with_spins += 1

    def notes(self) -> dict:
        """What the campaign reports about this search: how often spinning was caught."""
        return {"spinning_agents_dropped": self.spins, "executions_with_spinning": self.executions_with_spins}
