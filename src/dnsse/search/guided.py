"""A chooser that steers one execution towards an advisor's hint, and random elsewhere.

An ordering hint is a sequence of operations. When the schedule solver
could turn the hint into an order of the steps of an earlier run (see
:mod:`dnsse.search.schedules`), the chooser follows that order of agents for
as long as the planned agent can run. Where there is no such order, or once
the run leaves it, the hint acts as priorities (the run's other choices,
its input values among them, are replayed too, as the steps exist under
them): the chooser keeps the index of
the first operation of the sequence that has not run yet; an agent whose
pending operation matches a *later* operation of the sequence drops below
every other runnable agent, and an agent about to perform the awaited
operation goes first. Everything else is chosen at random, so a hint only
narrows the schedule, never fixes it. Off the solver's order and unless it is
about to perform the awaited operation, an agent caught spinning yields to
the others (:class:`~dnsse.search.finish.Finish`); to agents the hint holds
back only after ``PATIENCE`` such choices: holding back the agent it waits
for must not keep a correct poll loop going until the step limit. An input hint answers the input's
choices with the indices of the hinted value.
"""

from __future__ import annotations

import random
from typing import Callable, Sequence

from dnsse.advisor.actor_calls import call_of
from dnsse.advisor.hints import DelayHint, FaultHint, OperationRef, OrderingHint
from dnsse.engine.choices import ChoiceKind, Chosen
from dnsse.engine.operation import Operation
from dnsse.search.finish import Finish
from dnsse.search.random_walk import RandomChooser


PATIENCE = 200


class GuidedChooser:
    wants_operations = True
    wants_offered = True
    wants_asker = True

    def __init__(
        self,
        seed: int,
        ordering: OrderingHint | None = None,
        input_plan: Sequence[int | None] = (),
        schedule: Sequence[int] = (),
        values: Sequence[tuple[str, int]] = (),
        fault: FaultHint | None = None,
        delay: DelayHint | None = None,
    ) -> None:
        self.rng = random.Random(seed)
        self.ordering = ordering
        self.progress = 0  # operations of the ordering that already ran
        self._done: dict[int, int] = {}  # sequence position -> matching operations already run
        self._input_plan = list(input_plan)
        self._inputs_asked = 0
        self._schedule = list(schedule)  # agent ids, one per step, from the solver
        self._followed = 0  # steps of the schedule that ran as planned
        self.finish = Finish(RandomChooser(seed))
        # Choices that may still go to a spinning agent over the agents the hint holds back.
        self._patience = PATIENCE
        # The other choices (inputs, seeds, message matches, faults) of the run the schedule orders:
        # its steps exist only under the same values.
        self._values = list(values)
        self.fault = fault
        self.delay = delay
        self._delay_done = 0  # operations matching the delay's that already ran
        self.fault_struck = False
        self._calls: list[str] = []  # the fault hint's actor's calls, in the order they first asked
        # What the program receives for an input's drawn value (a concolic stand-in), if not the value.
        self.input_value: Callable[[object, object], object] | None = None

    @property
    def hint_held(self) -> bool:
        return self.ordering is not None and self.progress == len(self.ordering.sequence)

    def next_agent(self, runnable: Sequence[int], current: int | None, step: int) -> int:
        return self.rng.randrange(len(runnable))

    def next_agent_seeing(
        self,
        runnable: Sequence[int],
        current: int | None,
        step: int,
        operations: Sequence[Operation],
        history: Sequence[tuple[int, Operation]],
        offered: Callable[[int], Chosen] | None = None,
    ) -> int:
        described = [offered(i) for i in range(len(runnable))] if offered is not None else None
        self.finish.follow(history)
        index = self._planned(runnable, history)
        if index is None:
            moving = self.finish.moving(runnable, operations)
            index = self._steer(described, moving) if described is not None else self.rng.choice(moving)
        if described is not None:
            self._ran(described[index])
        return index

    def next_value(self, kind: str, options: int, asker: Callable[[], Chosen] | None = None) -> int:
        if kind == ChoiceKind.FAULT and self.fault is not None and asker is not None:
            return int(self._strikes(asker().agent) and options > 1)
        if self._values:
            planned_kind, planned = self._values.pop(0)
            if planned_kind == kind and planned < options:
                return planned
            self._values = []
        if kind == ChoiceKind.INPUT and self._inputs_asked < len(self._input_plan):
            planned = self._input_plan[self._inputs_asked]
            self._inputs_asked += 1
            if planned is not None and 0 <= planned < options:
                return planned
        return self.rng.randrange(options)

    def _strikes(self, agent: str) -> bool:
        """Whether the fault hint crashes ``agent``'s worker at this fault point."""
        assert self.fault is not None
        call = call_of(agent)
        if self.fault_struck or call is None or call[0] != self.fault.actor:
            return False
        if agent not in self._calls:
            self._calls.append(agent)
        earlier = self._calls[: self._calls.index(agent)]
        self.fault_struck = sum(call_of(label)[1] == self.fault.method for label in earlier) >= self.fault.after  # type: ignore[index]
        return self.fault_struck

    def _planned(self, runnable: Sequence[int], history: Sequence[tuple[int, object]]) -> int | None:
        """The index of the schedule's next agent while the run still follows the schedule."""
        if not self._schedule:
            return None
        if self._followed < len(history):
            # Steps since the last choice (forced ones included) must be the planned ones too.
            for agent, _ in history[self._followed :]:
                if self._followed >= len(self._schedule) or self._schedule[self._followed] != agent:
                    self._schedule = []
                    return None
                self._followed += 1
        if self._followed >= len(self._schedule) or self._schedule[self._followed] not in runnable:
            self._schedule = []
            return None
        return list(runnable).index(self._schedule[self._followed])

    def _steer(self, described: list[Chosen], moving: list[int]) -> int:
        """The awaited option, else one of ``moving`` (the options not caught spinning) the hint does not hold back."""
        if self.delay is not None:
            return self._among([i for i, option in enumerate(described) if not self._delayed(option)], moving)
        if self.ordering is None or self.hint_held:
            return self.rng.choice(moving)
        awaited = [i for i, option in enumerate(described) if self._matches(self.progress, option)]
        if awaited:
            return self.rng.choice(awaited)
        return self._among([i for i, option in enumerate(described) if not self._held_back(option)], moving)

    def _among(self, free: list[int], moving: list[int]) -> int:
        """One of ``free`` (the options the hint lets run), preferring those not caught spinning."""
        unstuck = [i for i in free if i in moving]
        if unstuck:
            return self.rng.choice(unstuck)
        if free and self._patience > 0:
            # Every agent the hint lets run is caught spinning; a read-only loop
            # with a local counter looks the same, so wait a while for it.
            self._patience -= 1
            return self.rng.choice(free)
        return self.rng.choice(moving)

    def _held_back(self, option: Chosen) -> bool:
        """``option`` is a later operation of the ordering than the one awaited."""
        assert self.ordering is not None
        return any(self._matches(position, option) for position in range(self.progress + 1, len(self.ordering.sequence)))

    def _matches(self, position: int, option: Chosen) -> bool:
        assert self.ordering is not None
        ref: OperationRef = self.ordering.sequence[position]
        if not ref.matches(option.agent, option.operation, option.where or None):
            return False
        return ref.occurrence is None or self._done.get(position, 0) + 1 == ref.occurrence

    def _delayed(self, option: Chosen) -> bool:
        assert self.delay is not None
        at = self.delay.at
        if not at.matches(option.agent, option.operation, option.where or None):
            return False
        return at.occurrence is None or self._delay_done + 1 == at.occurrence

    def _ran(self, option: Chosen) -> None:
        if self.delay is not None and self.delay.at.matches(option.agent, option.operation, option.where or None):
            self._delay_done += 1
        if self.ordering is None:
            return
        advances = not self.hint_held and self._matches(self.progress, option)
        for position, ref in enumerate(self.ordering.sequence):
            if ref.matches(option.agent, option.operation, option.where or None):
                self._done[position] = self._done.get(position, 0) + 1
        if advances:
            self.progress += 1
