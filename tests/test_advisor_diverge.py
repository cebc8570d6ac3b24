"""Inputs that make two ranks decide one branch apart: solved from the ranks' comparisons, found first."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import check_report

import z3

from dnsse.advisor.divergence import diverging_inputs
from dnsse.symbolic.values import Condition

PROGRAM = Path(__file__).parent / "programs" / "advisor_diverge.py"
SEEDS = (0, 1, 2)
SITE = ("app.py", 7, 12)


def test_a_comparison_two_ranks_made_alike_is_solved_apart() -> None:
    tokens = z3.Int("tokens")
    conditions = [Condition(tokens - 0 > 0, True, SITE, "rank 0"), Condition(tokens - 64 > 0, True, SITE, "rank 1")]
    asked: set[tuple] = set()
    [found] = diverging_inputs(conditions, [tokens >= 0, tokens <= 100_000], asked)
    value = dict(found.values)["tokens"]
    # The verdict is true: exactly one rank's condition holds for the value z3 gave.
    assert (value > 0) != (value - 64 > 0) and found.agents == ("rank 0", "rank 1") and found.where == "app.py:7"
    # A pair is asked once.
    assert diverging_inputs(conditions, [], asked) == []


def test_no_query_where_the_ranks_already_differ_or_compare_alike() -> None:
    tokens = z3.Int("tokens")
    apart = [Condition(tokens > 0, True, SITE, "rank 0"), Condition(tokens > 64, False, SITE, "rank 1")]
    alike = [Condition(tokens > 0, True, SITE, "rank 0"), Condition(tokens > 0, True, SITE, "rank 1")]
    assert diverging_inputs(apart, [], set()) == [] and diverging_inputs(alike, [], set()) == []


def test_no_value_when_the_ranges_leave_none() -> None:
    tokens = z3.Int("tokens")
    conditions = [Condition(tokens > 0, True, SITE, "rank 0"), Condition(tokens > 64, True, SITE, "rank 1")]
    assert diverging_inputs(conditions, [tokens >= 100], set()) == []


def _check(tmp_path: Path, entry: str, strategy: str, seed: int, budget: int = 300) -> tuple[int, dict]:
    return check_report(tmp_path, f"{PROGRAM}:{entry}", strategy, seed, budget)


@pytest.mark.slow
@pytest.mark.torch
def test_a_batch_that_leaves_one_rank_no_tokens_is_found_by_the_solved_input(tmp_path: Path) -> None:
    for seed in SEEDS:
        code, guided = _check(tmp_path, "main", "llm", seed)
        bug = guided["bugs"][0]
        assert code == 1 and bug["kind"] == "collective_mismatch" and 1 <= bug["inputs"]["tokens"] <= 64, bug
        assert guided["advisor"]["offline"]["found_bugs"][0].startswith("diverge: input tokens = "), guided["advisor"]
        # Random's executions do not depend on its budget: stopping it just past ten times the guided count
        # decides the comparison as its whole budget would, without running the rest.
        code, unguided = _check(tmp_path, "main", "random", seed, budget=10 * guided["executions"] + 1)
        assert unguided["executions"] > 10 * guided["executions"], seed


@pytest.mark.slow
@pytest.mark.torch
def test_every_rank_joining_the_collective_survives_the_solved_inputs(tmp_path: Path) -> None:
    code, report = _check(tmp_path, "every_rank_reduces", "llm", 0, budget=40)
    assert code == 0 and report["bugs"] == [] and report["executions"] == 40
    assert report["advisor"]["offline"]["first_tried"].count("diverge: input tokens = 1") == 1
