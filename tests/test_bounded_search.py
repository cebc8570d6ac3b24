"""ipb and idb run every schedule once, bound by bound, as brute force counts them.

Brute force here is an odometer over every choice sequence that also counts,
for each schedule, its preemptions (switches away from an agent that could
go on) and its delays (agents skipped over in round-robin order from the one
that could go on, else from the one after the agent that ran last). An
iterative search must run each schedule exactly once, in order of its
bound, and have run every schedule within ``k`` once it says bound ``k`` is covered.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Sequence

import pytest
from helpers import PROGRAMS

from dnsse.engine.choices import ChoiceKind
from dnsse.engine.operation import Operation
from dnsse.engine.runner import ExecutionResult, run_execution
from dnsse.engine.target import LoadedTarget, TargetSpec
from dnsse.frameworks.base import framework_named
from dnsse.search.bounded import DELAYS, PREEMPTIONS, IterativeBoundStrategy

PROGRAM = PROGRAMS / "bounded_programs.py"
ENTRIES = ["lost_update", "guarded", "deadlock", "three_agents"]


class CountingOdometer:
    """Replays ``prefix``, answers 0 beyond it; counts the schedule's preemptions and delays its own way."""

    wants_operations = True

    def __init__(self, prefix: Sequence[int]) -> None:
        self.prefix = prefix
        self.options: list[int] = []
        self.preemptions = 0
        self.delays = 0

    def _take(self, options: int) -> int:
        position = len(self.options)
        self.options.append(options)
        return self.prefix[position] if position < len(self.prefix) else 0

    def next_value(self, kind: str, options: int) -> int:
        return 0 if kind == ChoiceKind.SEED else self._take(options)

    def next_agent_seeing(
        self, runnable: Sequence[int], current: int | None, step: int,
        operations: Sequence[Operation], history: Sequence[tuple[int, Operation]],
    ) -> int:
        index = self._take(len(runnable))
        chosen = runnable[index]
        if current is not None and chosen != current:
            self.preemptions += 1
        # Round robin: the agent that could go on first, else the next id after the one that ran last.
        first = current if current is not None else (history[-1][0] + 1 if history else 0)
        ring = sorted(runnable, key=lambda agent: (agent < first, agent))
        self.delays += ring.index(chosen)
        return index


def brute_force(run) -> list[tuple[tuple[int, ...], int, int, str | None]]:  # type: ignore[no-untyped-def]
    """Every schedule: (the agents of its steps, preemptions, delays, bug kind)."""
    schedules = []
    prefix: list[int] = []
    while True:
        chooser = CountingOdometer(prefix)
        result = run(chooser)
        schedules.append((steps_of(result), chooser.preemptions, chooser.delays, kind_of(result)))
        taken = list(prefix) + [0] * (len(chooser.options) - len(prefix))
        while taken and taken[-1] + 1 >= chooser.options[len(taken) - 1]:
            taken.pop()
        if not taken:
            return schedules
        taken[-1] += 1
        prefix = taken


def steps_of(result: ExecutionResult) -> tuple[int, ...]:
    return tuple(agent for agent, _ in result.history)


def kind_of(result: ExecutionResult) -> str | None:
    return result.bug.kind if result.bug is not None else None


def iterate(run, measure: str) -> tuple[list[ExecutionResult], list[int]]:  # type: ignore[no-untyped-def]
    """Run the strategy until it is exhausted: each execution, and the bound the search was in for it."""
    strategy = IterativeBoundStrategy(measure)
    results, bounds = [], []
    while not strategy.exhausted:
        assert len(results) < 1000, "the search never ended"
        bounds.append(strategy.bound)
        result = run(strategy.chooser_for(len(results)))
        strategy.observe(result)
        results.append(result)
    return results, bounds


@pytest.fixture(scope="module")
def runs() -> dict:
    """Brute force, ipb and idb over each program, run once for the module."""
    outcome = {}
    for entry in ENTRIES:
        target = LoadedTarget(TargetSpec.parse(f"{PROGRAM}:{entry}"), "auto")
        framework = framework_named(target.framework, 2)
        with framework.activate():

            def run(chooser):  # type: ignore[no-untyped-def]
                return run_execution(target, framework, chooser)

            outcome[entry] = (brute_force(run), iterate(run, PREEMPTIONS), iterate(run, DELAYS))
    return outcome


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("measure", [PREEMPTIONS, DELAYS])
def test_each_schedule_runs_exactly_once_in_order_of_its_bound(runs: dict, entry: str, measure: str) -> None:
    schedules, by_preemptions, by_delays = runs[entry]
    results, bounds = by_preemptions if measure == PREEMPTIONS else by_delays
    cost = {steps: (preemptions if measure == PREEMPTIONS else delays) for steps, preemptions, delays, _ in schedules}
    ran = [steps_of(result) for result in results]
    assert sorted(ran) == sorted(cost)  # every schedule, none twice
    assert [cost[steps] for steps in ran] == bounds  # each run in the bound that costs it
    assert bounds == sorted(bounds)


@pytest.mark.parametrize("entry", ENTRIES)
def test_the_bugs_are_those_brute_force_sees(runs: dict, entry: str) -> None:
    schedules, (by_preemptions, _), (by_delays, _) = runs[entry]
    expected = sorted((steps, kind) for steps, _, _, kind in schedules)
    assert sorted((steps_of(r), kind_of(r)) for r in by_preemptions) == expected
    assert sorted((steps_of(r), kind_of(r)) for r in by_delays) == expected


def test_bound_zero_of_idb_is_the_one_round_robin_schedule(runs: dict) -> None:
    _, _, (results, bounds) = runs["three_agents"]
    assert bounds.count(0) == 1


def check(tmp_path: Path, entry: str, strategy: str, budget: int) -> tuple[subprocess.CompletedProcess, dict]:
    report = tmp_path / f"{entry}-{strategy}.json"
    result = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", f"{PROGRAM}:{entry}", "--strategy", strategy, "--budget",
         str(budget), "--no-minimize", "--out", str(tmp_path / "out"), "--json", str(report)],
        capture_output=True, text=True, timeout=600,
    )
    return result, json.loads(report.read_text())


def test_a_lost_update_is_found_after_bound_zero_replays_and_the_report_says_so(tmp_path: Path) -> None:
    result, report = check(tmp_path, "lost_update", "ipb", 100)
    assert result.returncode == 1, result.stdout + result.stderr
    assert report["bugs"][0]["kind"] == "exception"
    assert report["search"]["bound_covered"] == 0 and report["search"]["bound_in_progress"] == 1
    assert "ipb ran every schedule with at most 0 preemptions; bound 1 was in progress" in result.stdout
    replay = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "replay", report["bugs"][0]["trace"]], capture_output=True, text=True,
        timeout=600,
    )
    assert replay.returncode == 1, replay.stdout + replay.stderr
    assert "lost update" in replay.stdout


def test_a_correct_program_searched_to_the_end_is_verified(tmp_path: Path) -> None:
    result, report = check(tmp_path, "guarded", "idb", 100)
    assert result.returncode == 0, result.stdout + result.stderr
    assert report["verified"]["bound"] == "none"
    assert report["executions"] == 6  # every schedule, as brute force counts them
    assert report["search"]["bound_in_progress"] == -1
    assert "no larger bound had more to run" in result.stdout


def test_a_budget_that_ends_within_a_bound_says_which_bound_was_covered(tmp_path: Path) -> None:
    result, report = check(tmp_path, "deadlock", "ipb", 3)
    assert report["verified"] is None
    assert report["search"] == {"bound_covered": 0, "bound_in_progress": 1, "executions_in_bound_in_progress": 2}


def test_workers_are_refused_rather_than_running_another_search(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", f"{PROGRAM}:deadlock", "--strategy", "idb", "--workers", "2",
         "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "--workers divides only the dfs search" in result.stderr
    assert "Traceback" not in result.stderr
