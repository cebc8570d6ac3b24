"""Every strategy declares how its executions divide, and every executor serves it the same way."""

from __future__ import annotations

from pathlib import Path

import pytest

from dnsse.campaign.config import CampaignConfig
from dnsse.campaign.run import run_campaign
from dnsse.errors import BadInput
from dnsse.search.registry import BUILT, make_strategy
from dnsse.search.strategy import Division, Strategy
from helpers import PROGRAMS

EXPECTED = {
    "random": Division.INDEPENDENT,
    "pct": Division.INDEPENDENT,
    "pos": Division.INDEPENDENT,
    "llm": Division.INDEPENDENT,
    "fuzz": Division.ROUNDS,
    "symbolic": Division.ROUNDS,
    "hybrid": Division.ROUNDS,
    "dfs": Division.TREE,
    "ipb": Division.ONE_PROCESS,
    "idb": Division.ONE_PROCESS,
}


def test_every_built_strategy_is_a_strategy_that_declares_its_division() -> None:
    assert sorted(EXPECTED) == sorted(BUILT)
    for name in BUILT:
        strategy = make_strategy(name, seed=0)
        assert isinstance(strategy, Strategy)
        assert strategy.division is EXPECTED[name], name
        # Only a strategy that merges rounds has learning to share.
        assert (strategy.shared_learning() is not None) == (strategy.division is Division.ROUNDS), name


def test_every_engine_of_the_portfolio_is_a_strategy() -> None:
    hybrid = make_strategy("hybrid", seed=0)
    assert hybrid.engines  # type: ignore[attr-defined]
    assert all(isinstance(engine, Strategy) for engine in hybrid.engines.values())  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["ipb", "idb"])
@pytest.mark.parametrize(("option", "settings"), [("--workers", {"workers": 2}), ("--ray-address", {"ray_address": "127.0.0.1:1"})])
def test_a_one_process_search_is_refused_by_every_executor_that_divides(
    name: str, option: str, settings: dict, tmp_path: Path
) -> None:
    config = CampaignConfig(f"{PROGRAMS}/threads_counter.py:unlocked", strategy=name, out=tmp_path, **settings)

    # Refused before any worker starts or any cluster is joined.
    with pytest.raises(BadInput, match=f"the {name} search runs in one process: {option} divides only the dfs search"):
        run_campaign(config)
