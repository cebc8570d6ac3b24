"""torch's default random generator, one per rank, as each rank's process has its own.

The ranks run as threads of one process here, and torch's CPU generator is
process-wide: without this, a rank's ``torch.randn`` after a scheduling point
would continue from where another rank's draws left the generator, so two
ranks that both ``torch.manual_seed(0)`` would build different data, the
values would differ from gloo's, and a program that relies on seeded ranks
agreeing (the same initial weights, the same dropout mask) would be reported
as buggy. Each time an agent of another rank runs again (the engine's
``on_resume``), the generator's state is saved for the rank that had it and
the resumed rank's is put back. Every rank starts from the state the
execution was seeded with, as real processes all start from torch's one
default seed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from dnsse.frameworks.torch_dist.world import RankState, rank_here

if TYPE_CHECKING:
    from dnsse.engine.execution import Execution

_generator = torch.default_generator


class RankGenerators:
    """Who holds the process's generator now, and the saved states of the others."""

    def __init__(self) -> None:
        self.initial = _generator.get_state()
        self.holder: RankState | None = None
        self.saved: dict[int, torch.Tensor] = {}

    def resumed(self, agent: object) -> None:
        """An agent runs again: give the generator to its rank if another rank had it."""
        state = rank_here()
        if state is None or state is self.holder:
            return
        holder = self.holder
        if holder is not None:
            self.saved[holder.rank] = _generator.get_state()
        _generator.set_state(self.saved.pop(state.rank, self.initial))
        self.holder = state


def give_each_rank_its_generator(execution: Execution) -> None:
    execution.on_resume = RankGenerators().resumed
