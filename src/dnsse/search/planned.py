"""A chooser that follows a planned choice sequence, or a planned order of agents, then lets another finish.

``fuzz``, ``symbolic`` and ``hybrid`` all run edited versions of earlier
executions: a sequence with one input value changed, a prefix spliced onto
another run, an order of steps with one race reversed. A
:class:`PlannedChooser` answers from the plan while the program asks what
the plan recorded; from the first choice that no longer fits (the edit
changed the program's path), ``fallback`` answers, so every edit yields a
complete run; it answers through :class:`~dnsse.search.finish.Finish`, so an
agent caught spinning lets the others go first. With ``order``, scheduling
choices follow that order of agents (a
:class:`~dnsse.search.schedules.Schedule`) and the plan answers only the
other choices.
"""

from __future__ import annotations

from typing import Callable, Sequence

from dnsse.engine.choices import Choice, ChoiceKind, Chooser
from dnsse.engine.operation import Operation
from dnsse.search.finish import Finish


class PlannedChooser:
    wants_operations = True

    def __init__(
        self,
        plan: Sequence[Choice],
        fallback: Chooser,
        order: Sequence[int] | None = None,
        stand_in: Callable[[object, object], object] | None = None,
    ) -> None:
        self.plan = [c for c in plan if c.kind != ChoiceKind.AGENT] if order is not None else list(plan)
        self.finish = Finish(fallback)
        self.position = 0
        self.fits = True
        self.order = list(order) if order is not None else None
        if stand_in is not None:
            self.input_value = stand_in
        if self.order is not None:
            # The planned steps as (agent, how many steps of it come first).
            counts: dict[int, int] = {}
            self._planned: list[tuple[int, int]] = []
            for agent in self.order:
                counts[agent] = counts.get(agent, 0) + 1
                self._planned.append((agent, counts[agent]))
            self._done: dict[int, int] = {}
            self._seen = 0
            self._next = 0

    def _take(self, kind: str, options: int) -> int | None:
        if not self.fits or self.position >= len(self.plan):
            self.fits = False
            return None
        choice = self.plan[self.position]
        if choice.kind != kind:
            self.fits = False
            return None
        self.position += 1
        # Same kind, other width (an input whose domain moved, fewer runnable agents): keep the answer in range.
        return choice.index if choice.index < options else choice.index % options

    def next_value(self, kind: str, options: int) -> int:
        index = self._take(kind, options)
        return self.finish.next_value(kind, options) if index is None else index

    def next_agent(self, runnable: Sequence[int], current: int | None, step: int) -> int:
        raise TypeError("PlannedChooser needs the operations of runnable agents (wants_operations)")

    def next_agent_seeing(
        self,
        runnable: Sequence[int],
        current: int | None,
        step: int,
        operations: Sequence[Operation],
        history: Sequence[tuple[int, Operation]],
    ) -> int:
        self.finish.follow(history)
        if self.order is None:
            index = self._take(ChoiceKind.AGENT, len(runnable))
            return self.finish.next_agent(runnable, current, step, operations) if index is None else index
        for agent, _ in history[self._seen :]:
            self._done[agent] = self._done.get(agent, 0) + 1
        self._seen = len(history)
        planned = self._planned
        while self._next < len(planned) and self._done.get(planned[self._next][0], 0) >= planned[self._next][1]:
            self._next += 1
        # The earliest planned step not yet taken whose agent can run now.
        for agent, nth in planned[self._next :]:
            if agent in runnable and self._done.get(agent, 0) < nth:
                return runnable.index(agent)
        return self.finish.next_agent(runnable, current, step, operations)
