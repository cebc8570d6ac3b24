"""pos and dfs as strategies, and the soundness of every strategy: each bug replays."""

from __future__ import annotations

import pytest
from helpers import controlled

from dnsse.engine.choices import ReplayChooser
from dnsse.errors import BadInput
from dnsse.search.dfs import DfsStrategy
from dnsse.search.registry import BUILT, PLANNED, make_strategy

BUGGY_PROGRAMS = [
    ("search_threads.py:lost_update", 2),
    ("search_threads.py:order_violation", 2),
    ("search_threads.py:atomicity_violation", 2),
    ("search_threads.py:lock_order", 2),
    ("search_threads.py:poll_alive", 2),
    ("threads_lost_wakeup.py:main", 2),
    ("search_torch.py:any_source", 3),
    ("torch_p2p.py:send_send", 2),
    ("torch_async.py:modifies_before_wait", 2),
    ("torch_mismatch.py:skips_last", 2),
]
EXECUTIONS_PER_STRATEGY = 12


def test_pos_and_dfs_are_built_and_no_longer_planned() -> None:
    assert {"pos", "dfs"} <= set(BUILT)
    assert not {"pos", "dfs"} & set(PLANNED)


def test_a_preemption_bound_for_another_strategy_is_bad_input() -> None:
    with pytest.raises(BadInput, match="dfs strategy only"):
        make_strategy("pct", 0, preemption_bound=2)


@pytest.mark.parametrize(("spec", "world_size"), BUGGY_PROGRAMS)
def test_every_bug_any_strategy_finds_replays_to_the_same_bug(spec: str, world_size: int) -> None:
    found = []
    with controlled(spec, world_size) as run:
        for name in ("random", "pct", "pos", "dfs"):
            strategy = make_strategy(name, seed=7)
            for execution in range(EXECUTIONS_PER_STRATEGY):
                if getattr(strategy, "exhausted", False):
                    break
                result = run(strategy.chooser_for(execution))
                strategy.observe(result)
                if result.bug is not None:
                    found.append((name, result))
        assert {name for name, _ in found} >= {"dfs"}, "dfs finds every bug of these small programs"
        print(f"\n{spec}: replaying {len(found)} bugs found by {sorted({name for name, _ in found})}")
        for name, result in found:
            again = run(ReplayChooser(result.choices))
            assert again.divergence is None
            assert again.bug is not None and again.bug.signature() == result.bug.signature(), name
            # Same steps in the same order (object names may hold ids that differ between runs).
            assert [(a, op.kind) for a, op in again.history] == [(a, op.kind) for a, op in result.history]


def test_pos_finds_the_lost_update_within_a_few_executions() -> None:
    strategy = make_strategy("pos", seed=0)
    with controlled("search_threads.py:lost_update") as run:
        hits = [run(strategy.chooser_for(i)).bug is not None for i in range(40)]
    assert any(hits)


def test_dfs_stops_reporting_nothing_verified_when_the_budget_ends_first() -> None:
    strategy = DfsStrategy()
    with controlled("search_threads.py:write_read") as run:
        for execution in range(2):
            strategy.observe(run(strategy.chooser_for(execution)))
    assert not strategy.exhausted
    assert strategy.verified() is None
