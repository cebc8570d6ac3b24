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
highest-priority agent spins and starves the one it waits for until the step
limit reports a false timeout. So once one agent has been chosen over others
``STARVATION_LIMIT`` times in a row, the rest of that execution is scheduled
fairly (uniformly at random), and ``k`` is learnt only from the part before.
"""

from __future__ import annotations

import random
from typing import Sequence

from dnsse.search.strategy import execution_seed

INITIAL_STEP_ESTIMATE = 32
STARVATION_LIMIT = 1000


class PctChooser:
    __slots__ = ("rng", "depth", "priorities", "change_points", "choices_made", "last", "streak", "fair_from")

    def __init__(self, seed: int, depth: int, steps: int) -> None:
        self.rng = random.Random(seed)
        self.depth = depth
        self.priorities: dict[int, float] = {}
        # change point -> the low priority given at it; later points get lower ones.
        points = self.rng.sample(range(1, steps + 1), min(depth - 1, steps))
        self.change_points = {point: float(depth - i) for i, point in enumerate(sorted(points), start=1)}
        self.choices_made = 0
        self.last: int | None = None
        self.streak = 0
        # The choice from which scheduling is fair, when starvation was seen.
        self.fair_from: int | None = None

    def _priority(self, agent: int) -> float:
        priority = self.priorities.get(agent)
        if priority is None:
            # Initial priorities lie above every change-point priority (<= depth - 1).
            priority = self.priorities[agent] = self.depth + self.rng.random()
        return priority

    def next_agent(self, runnable: Sequence[int], current: int | None, step: int) -> int:
        self.choices_made += 1
        if self.fair_from is not None:
            return self.rng.randrange(len(runnable))
        best = max(range(len(runnable)), key=lambda i: self._priority(runnable[i]))
        lowered = self.change_points.get(self.choices_made)
        if lowered is not None:
            self.priorities[runnable[best]] = lowered
            best = max(range(len(runnable)), key=lambda i: self._priority(runnable[i]))
        chosen = runnable[best]
        self.streak = self.streak + 1 if chosen == self.last else 1
        self.last = chosen
        if self.streak >= STARVATION_LIMIT:
            self.fair_from = self.choices_made
        return best

    def next_value(self, kind: str, options: int) -> int:
        return self.rng.randrange(options)


class PctStrategy:
    name = "pct"

    def __init__(self, seed: int, depth: int = 3) -> None:
        if depth < 1:
            raise ValueError("the PCT depth must be at least 1")
        self.seed = seed
        self.depth = depth
        self.steps = INITIAL_STEP_ESTIMATE
        self._last: PctChooser | None = None

    def chooser_for(self, execution: int) -> PctChooser:
        self._last = PctChooser(execution_seed(self.seed, execution), self.depth, self.steps)
        return self._last

    def observe(self, result) -> None:  # type: ignore[no-untyped-def]
        scheduling_choices = sum(1 for choice in result.choices if choice.kind == "agent")
        fair_from = self._last.fair_from if self._last is not None else None
        self.steps = max(self.steps, scheduling_choices if fair_from is None else fair_from)
