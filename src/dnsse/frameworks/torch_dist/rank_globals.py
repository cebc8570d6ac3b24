"""torch's process-wide state that each rank's process keeps for itself, one copy per rank here.

The ranks run as threads of one process, so what torch keeps per process
would be shared by them:

- the default CPU random generator: a rank's ``torch.randn`` after a
  scheduling point would continue from where another rank's draws left it,
  so two ranks that both ``torch.manual_seed(0)`` would draw different
  values (values unlike gloo's, and a program relying on seeded ranks
  agreeing, same weights or same dropout mask, reported as buggy);
- DTensor's table of custom op handlers, which ``loss_parallel()`` fills on
  entry and empties on exit: one rank leaving it would take the loss ops
  away from another still in its backward pass (a false "mixed torch.Tensor
  and DTensor" error).

Each time an agent of another rank runs again (the engine's ``on_resume``),
the state is saved for the rank that had it and the resumed rank's is put
back. Every rank starts from the generator state the execution was seeded
with, as real processes all start from torch's one default seed, and from
the handlers a fresh DTensor dispatcher has (so an execution cut short
inside ``loss_parallel()`` leaves nothing to the next).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import torch

from dnsse.frameworks.torch_dist.world import RankState, rank_here

if TYPE_CHECKING:
    from dnsse.engine.execution import Execution

_generator = torch.default_generator
_DTENSOR = "torch.distributed.tensor._api"
# The handlers of a fresh dispatcher, made once DTensor is imported (see _fresh_handlers).
_pristine: list[dict] = []


class RankGlobals:
    """Which rank's copy is in torch's process-wide state now, and the saved copies of the others."""

    def __init__(self) -> None:
        self.initial = _generator.get_state()
        self.holder: RankState | None = None
        self.saved: dict[int, tuple[torch.Tensor, dict | None]] = {}

    def resumed(self, agent: object) -> None:
        """An agent runs again: give torch's process-wide state to its rank if another rank had it."""
        state = rank_here()
        if state is None or state is self.holder:
            return
        handlers = _handlers()
        holder = self.holder
        if holder is not None:
            self.saved[holder.rank] = (_generator.get_state(), None if handlers is None else dict(handlers))
        generator, own = self.saved.pop(state.rank, (self.initial, None))
        _generator.set_state(generator)
        if handlers is not None:
            handlers.clear()
            handlers.update(_fresh_handlers() if own is None else own)
        self.holder = state


def _handlers() -> dict | None:
    """DTensor's custom op handlers, once DTensor is imported (importing it takes seconds: never done here)."""
    api = sys.modules.get(_DTENSOR)
    return None if api is None else api.DTensor._op_dispatcher._custom_op_handlers


def _fresh_handlers() -> dict:
    if not _pristine:
        _pristine.append(dict(type(sys.modules[_DTENSOR].DTensor._op_dispatcher)()._custom_op_handlers))
    return _pristine[0]


def keep_torch_globals_per_rank(execution: Execution) -> None:
    execution.on_resume = RankGlobals().resumed
