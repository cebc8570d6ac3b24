"""Every schedule of a small program, without reduction: the yardstick for ``dfs``.

Walks the whole tree of choice sequences (every agent choice and every value
choice; the seed is fixed to 0, as under ``dfs``) like an odometer: replay a
prefix, take option 0 for every new choice, then advance the last choice
that has options left. Exponential, so only for programs whose schedules can
be counted; the theory tests and the benchmark table compare ``dfs`` with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

from dnsse.engine.choices import ChoiceKind, Chooser
from dnsse.engine.inputs import is_open
from dnsse.engine.runner import ExecutionResult


@dataclass
class Schedule:
    result: ExecutionResult
    # Switches away from an agent that could have gone on (as ``dfs`` counts them).
    preemptions: int


class _OdometerChooser:
    """Replays ``prefix`` (indices), answers 0 beyond it, and notes each choice's options."""

    def __init__(self, prefix: Sequence[int]) -> None:
        self.prefix = prefix
        self.options: list[int] = []
        self.preemptions = 0

    def _take(self, options: int) -> int:
        position = len(self.options)
        self.options.append(options)
        return self.prefix[position] if position < len(self.prefix) else 0

    def next_agent(self, runnable: Sequence[int], current: int | None, step: int) -> int:
        index = self._take(len(runnable))
        if current is not None and current in runnable and runnable[index] != current:
            self.preemptions += 1
        return index

    def next_value(self, kind: str, options: int) -> int:
        # The seed, and an int or float without a Range, keep their value, as dfs keeps them.
        if kind == ChoiceKind.SEED or is_open(options):
            return 0
        return self._take(options)


def all_schedules(run: Callable[[Chooser], ExecutionResult], limit: int = 100_000) -> Iterator[Schedule]:
    """Run every choice sequence of the program once; stops with ValueError past ``limit`` runs."""
    prefix: list[int] = []
    for _ in range(limit):
        chooser = _OdometerChooser(prefix)
        yield Schedule(run(chooser), chooser.preemptions)
        taken = list(prefix) + [0] * (len(chooser.options) - len(prefix))
        while taken and taken[-1] + 1 >= chooser.options[len(taken) - 1]:
            taken.pop()
        if not taken:
            return
        taken[-1] += 1
        prefix = taken
    raise ValueError(f"the program has more than {limit} schedules: too many to enumerate")
