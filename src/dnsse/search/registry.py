"""Strategies by name, and the names that are planned but not built."""

from __future__ import annotations

from dnsse.errors import BadInput
from dnsse.search.pct import PctStrategy
from dnsse.search.random_walk import RandomStrategy
from dnsse.search.strategy import Strategy

BUILT = ("random", "pct")
PLANNED = ("pos", "dfs", "fuzz", "symbolic", "llm", "hybrid")
# The strongest strategy that exists; becomes "hybrid" once hybrid is built.
DEFAULT = "pct"


def make_strategy(name: str, seed: int, pct_depth: int = 3) -> Strategy:
    if name == "random":
        return RandomStrategy(seed)
    if name == "pct":
        return PctStrategy(seed, depth=pct_depth)
    if name in PLANNED:
        raise BadInput(
            f"the {name} strategy is not built yet; the strategies that exist are: {', '.join(BUILT)}"
        )
    raise BadInput(f"unknown strategy {name!r}; choose one of: {', '.join(BUILT)}")
