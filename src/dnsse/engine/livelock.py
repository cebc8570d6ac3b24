"""A livelock seen early: past the unfair prefix, every agent that can run only spins, and nothing else can change.

The step limit reports any livelock in the end; this says it sooner when
the state can no longer change: under fair scheduling, every agent that
can run goes round a loop that writes nothing (:mod:`dnsse.engine.spin_watch`),
no agent waits with a deadline (time could not change what it waits for),
and no agent reads a clock (a loop on the clock ends by itself). When that
has held for :data:`SPIN_STEPS` steps in a row, the spinners are waiting
for something that only an agent that will never run could do.
"""

from __future__ import annotations

from typing import Sequence

from dnsse.engine.operation import Operation
from dnsse.engine.spin_watch import SpinWatch

SPIN_STEPS = 10_000


class LivelockWatch:
    """Counts the steps in a row in which nothing could change."""

    __slots__ = ("spins", "streak", "reads")

    def __init__(self) -> None:
        self.spins = SpinWatch()
        self.streak = 0
        self.reads = -1

    def stuck(
        self, history: Sequence[tuple[int, Operation]], runnable: list[int], pending: list[Operation],
        deadlines: bool, reads: int,
    ) -> bool:
        """Whether this step makes :data:`SPIN_STEPS` in a row where only spinning could happen."""
        spins = self.spins
        spins.follow(history)
        if deadlines or reads != self.reads or spins.moving(runnable, pending):
            self.streak = 0
            self.reads = reads
            return False
        self.streak += 1
        return self.streak >= SPIN_STEPS
