"""The default portfolio never loses badly to the best single strategy on small classic bugs."""

from __future__ import annotations

import pytest

from benchmarks.portfolio import BUGS, measure


@pytest.mark.slow
@pytest.mark.parametrize("bug", list(BUGS))
def test_hybrid_finds_each_classic_bug_within_twice_the_best_strategy_plus_two(bug: str) -> None:
    row = measure(bug, seeds=5, budget=200)
    best, executions = row.best_single
    assert row.medians["hybrid"] <= 2 * executions + 2, (
        f"hybrid needs a median {row.medians['hybrid']} executions on the {bug}, {best} {executions}: {row.medians}"
    )
