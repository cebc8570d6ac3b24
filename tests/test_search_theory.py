"""The guarantees of the systematic strategies, checked against brute force.

On programs small enough to run every schedule, DPOR must run at least one
execution of every Mazurkiewicz class and find every bug brute force finds;
the preemption-bounded search must run exactly the schedules within its
bound; PCT must hit a depth-d bug at least as often as its bound promises.
Counts are printed (``pytest -s``) so the reduction can be read off.
"""

from __future__ import annotations

import functools
import math
from typing import Callable

import pytest
from helpers import controlled

from dnsse.engine.choices import ChoiceKind, Chooser
from dnsse.engine.runner import ExecutionResult
from dnsse.search.brute_force import Schedule, all_schedules
from dnsse.search.dependency import canonical_order
from dnsse.search.dfs import DfsStrategy
from dnsse.search.pct import PctChooser

SMALL_PROGRAMS = [
    ("search_threads.py:lost_update", 2),
    ("search_threads.py:write_read", 2),
    ("search_threads.py:order_violation", 2),
    ("search_threads.py:atomicity_violation", 2),
    ("search_threads.py:lock_order", 2),
    ("search_threads.py:poll_alive", 2),
    ("search_torch.py:any_source", 3),
    ("search_torch.py:reduce_then_exchange", 2),
]


@functools.cache
def brute_force(spec: str, world_size: int = 2) -> list[Schedule]:
    """Every schedule of a program, run once per test session."""
    with controlled(spec, world_size) as run:
        return list(all_schedules(run, limit=5000))


def equivalence_class(result: ExecutionResult) -> tuple:
    """The Mazurkiewicz class of a run, with its value choices (message matches)."""
    values = tuple(c.index for c in result.choices if c.kind not in (ChoiceKind.AGENT, ChoiceKind.SEED))
    return canonical_order(result.history, result.created_at), values


def run_dfs(
    run: Callable[[Chooser], ExecutionResult], bound: int | None = None
) -> tuple[DfsStrategy, list[ExecutionResult]]:
    """Run ``dfs`` until it has exhausted its tree; the strategy and every execution."""
    strategy = DfsStrategy(bound=bound)
    results = []
    while not strategy.exhausted:
        result = run(strategy.chooser_for(len(results)))
        strategy.observe(result)
        results.append(result)
    return strategy, results


@pytest.mark.parametrize(("spec", "world_size"), SMALL_PROGRAMS)
def test_dpor_covers_every_class_and_finds_every_bug_brute_force_finds(spec: str, world_size: int) -> None:
    brute = [schedule.result for schedule in brute_force(spec, world_size)]
    with controlled(spec, world_size) as run:
        strategy, explored = run_dfs(run)
    # A run that stops at a bug is a prefix, not a class of complete runs: those count by their bug.
    brute_classes = {equivalence_class(r) for r in brute if r.bug is None}
    dpor_classes = {equivalence_class(r) for r in explored if r.bug is None}
    brute_bugs = {r.bug.signature() for r in brute if r.bug is not None}
    dpor_bugs = {r.bug.signature() for r in explored if r.bug is not None}
    print(
        f"\n{spec}: brute force {len(brute)} executions, {len(brute_classes)} classes, {len(brute_bugs)} bugs; "
        f"dpor {len(explored)} executions ({strategy.redundant} cut by sleep sets)"
    )
    assert brute_classes <= dpor_classes
    assert brute_bugs <= dpor_bugs
    assert strategy.verified() is not None
    assert len(explored) <= len(brute)


def test_dpor_runs_one_execution_when_no_two_steps_are_dependent_across_threads() -> None:
    with controlled("search_threads.py:disjoint") as run:
        _, explored = run_dfs(run)
    assert len({equivalence_class(r) for r in explored}) == 1
    assert len(explored) < 20  # brute force needs 1121


@pytest.mark.parametrize("bound", [0, 1, 2])
@pytest.mark.parametrize("spec", ["search_threads.py:lost_update", "search_threads.py:lock_order"])
def test_the_preemption_bounded_search_runs_exactly_the_schedules_within_the_bound(spec: str, bound: int) -> None:
    within = [s.result for s in brute_force(spec) if s.preemptions <= bound]
    with controlled(spec) as run:
        strategy, explored = run_dfs(run, bound=bound)
    print(f"\n{spec}: preemptions<={bound}: brute force {len(within)}, dfs {len(explored)}")
    assert sorted(tuple(c.index for c in r.choices) for r in explored) == sorted(
        tuple(c.index for c in r.choices) for r in within
    )
    assert strategy.verified()["bound"] == f"preemptions<={bound}"  # type: ignore[index]


def test_a_search_whose_program_does_not_replay_verifies_nothing() -> None:
    strategy = DfsStrategy()
    with controlled("search_threads.py:lost_update") as run:
        first = run(strategy.chooser_for(0))
        strategy.observe(first)
        diverged = run(strategy.chooser_for(1))
    diverged.divergence = "the program read the clock"
    strategy.observe(diverged)
    while not strategy.exhausted:
        with controlled("search_threads.py:lost_update") as run:
            strategy.observe(run(strategy.chooser_for(strategy.executions)))
    assert strategy.verified() is None


@pytest.mark.parametrize(
    ("spec", "depth"),
    [("search_threads.py:order_violation", 1), ("search_threads.py:atomicity_violation", 2)],
)
def test_pct_hits_a_depth_d_bug_at_least_as_often_as_its_bound(spec: str, depth: int) -> None:
    probe = [s.result for s in brute_force(spec)]
    agents = max(len(r.agent_names) for r in probe)
    steps = max(sum(1 for c in r.choices if c.kind == ChoiceKind.AGENT) for r in probe)
    trials = 200
    with controlled(spec) as run:
        hits = sum(run(PctChooser(seed, depth, steps)).bug is not None for seed in range(trials))
    bound = 1 / (agents * steps ** (depth - 1))
    print(f"\n{spec}: depth {depth}, n={agents}, k={steps}: hit rate {hits / trials:.3f}, bound {bound:.3f}")
    # The bound can be tight (depth 1 here: exactly 1/n), so a sampled rate
    # may fall just below it by chance: allow three standard deviations.
    slack = 3 * math.sqrt(trials * bound * (1 - bound))
    assert hits >= trials * bound - slack
