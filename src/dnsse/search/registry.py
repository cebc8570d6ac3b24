"""Strategies by name, and the names that are planned but not built."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dnsse.errors import BadInput
from dnsse.suggest import did_you_mean

if TYPE_CHECKING:
    from dnsse.search.advisor_setup import AdvisorSetup
    from dnsse.search.strategy import Strategy

BUILT = ("hybrid", "random", "pct", "pos", "dfs", "ipb", "idb", "fuzz", "symbolic", "llm")
PLANNED: tuple[str, ...] = ()
# The strongest strategy that exists.
DEFAULT = "hybrid"


def make_strategy(
    name: str,
    seed: int,
    pct_depth: int = 3,
    preemption_bound: int | None = None,
    advisor: AdvisorSetup | None = None,
) -> Strategy:
    """The strategy called ``name``; ``preemption_bound`` is for ``dfs`` only (``None``: no bound).

    ``advisor`` (for ``llm`` and ``hybrid``) names the program's source and the
    model to ask; without it the advisor is the offline one.
    """
    if preemption_bound is not None and name != "dfs":
        raise BadInput(f"--preemption-bound applies to the dfs strategy only, not to {name}")
    if preemption_bound is not None and preemption_bound < 0:
        raise BadInput(f"--preemption-bound must be at least 0, got {preemption_bound}")
    # Each strategy's module is imported when it is asked for: the solver (z3), the advisors and the
    # corpus cost a random campaign ~0.1 s of start-up it never uses.
    if name == "random":
        from dnsse.search.random_walk import RandomStrategy

        return RandomStrategy(seed)
    if name == "pct":
        from dnsse.search.pct import PctStrategy

        return PctStrategy(seed, depth=pct_depth)
    if name == "pos":
        from dnsse.search.pos import PosStrategy

        return PosStrategy(seed)
    if name == "dfs":
        from dnsse.search.dfs import DfsStrategy

        return DfsStrategy(bound=preemption_bound, lock_order_last=True)
    if name in ("ipb", "idb"):
        from dnsse.search.bounded import DELAYS, PREEMPTIONS, IterativeBoundStrategy

        return IterativeBoundStrategy(PREEMPTIONS if name == "ipb" else DELAYS)
    if name == "fuzz":
        from dnsse.search.fuzz import FuzzStrategy

        return FuzzStrategy(seed)
    if name == "symbolic":
        from dnsse.search.symbolic import SymbolicStrategy

        return SymbolicStrategy(seed)
    if name == "hybrid":
        from dnsse.search.hybrid import HybridStrategy

        return HybridStrategy(seed, pct_depth, advisor)
    if name == "llm":
        from dnsse.search.llm import AdvisorSetup, LlmStrategy

        return LlmStrategy(seed, advisor if advisor is not None else AdvisorSetup())
    if name in PLANNED:
        raise BadInput(
            f"the {name} strategy is not built yet; the strategies that exist are: {', '.join(BUILT)}"
        )
    raise BadInput(f"unknown strategy {name!r}; choose one of: {', '.join(BUILT)}{did_you_mean(name, BUILT)}")
