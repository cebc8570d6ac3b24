"""Strategies by name, and the names that are planned but not built."""

from __future__ import annotations

from dnsse.errors import BadInput
from dnsse.search.dfs import DfsStrategy
from dnsse.search.fuzz import FuzzStrategy
from dnsse.search.hybrid import HybridStrategy
from dnsse.search.llm import AdvisorSetup, LlmStrategy
from dnsse.search.pct import PctStrategy
from dnsse.search.pos import PosStrategy
from dnsse.search.random_walk import RandomStrategy
from dnsse.search.symbolic import SymbolicStrategy
from dnsse.search.strategy import Strategy

BUILT = ("hybrid", "random", "pct", "pos", "dfs", "fuzz", "symbolic", "llm")
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
    if name == "random":
        return RandomStrategy(seed)
    if name == "pct":
        return PctStrategy(seed, depth=pct_depth)
    if name == "pos":
        return PosStrategy(seed)
    if name == "dfs":
        return DfsStrategy(bound=preemption_bound)
    if name == "fuzz":
        return FuzzStrategy(seed)
    if name == "symbolic":
        return SymbolicStrategy(seed)
    if name == "hybrid":
        return HybridStrategy(seed, pct_depth, advisor)
    if name == "llm":
        return LlmStrategy(seed, advisor if advisor is not None else AdvisorSetup())
    if name in PLANNED:
        raise BadInput(
            f"the {name} strategy is not built yet; the strategies that exist are: {', '.join(BUILT)}"
        )
    raise BadInput(f"unknown strategy {name!r}; choose one of: {', '.join(BUILT)}")
