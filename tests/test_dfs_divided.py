"""``dfs`` divided among workers: disjoint subtrees, the same schedules, the same verdict.

Most tests drive the division in one process (units taken for several
workers before any slice comes back, as concurrent workers take them), so
they can compare every explored schedule with a single-process search; the
CLI tests run real worker processes.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import HealthCheck, assume, given, settings

from dnsse.engine.choices import Chooser
from dnsse.engine.runner import ExecutionResult, run_execution
from dnsse.engine.target import LoadedTarget, TargetSpec
from dnsse.frameworks.base import framework_named
from dnsse.search.brute_force import all_schedules
from dnsse.search.dfs import DfsStrategy
from dnsse.search.dfs_share import DfsShare, Unit
from dnsse.search.dfs_slice import SliceLimits, run_slice
from tests.test_dfs_against_brute_force import BRUTE_FORCE_LIMIT, outcomes, thread_programs

PROGRAMS = Path(__file__).parent / "programs"
Run = Callable[[Chooser], ExecutionResult]


def digest(result: ExecutionResult) -> str:
    return hashlib.sha256(json.dumps([choice.to_json() for choice in result.choices]).encode()).hexdigest()


def one_process(run: Run, bound: int | None) -> tuple[list[ExecutionResult], DfsStrategy]:
    search = DfsStrategy(bound)
    results: list[ExecutionResult] = []
    while not search.exhausted:
        result = run(search.chooser_for(len(results)))
        search.observe(result)
        results.append(result)
    return results, search


def divided(
    run: Run, bound: int | None, workers: int, size: int, fate: Callable[[Unit], str] = lambda unit: "run"
) -> tuple[list[ExecutionResult], DfsShare]:
    """Rounds in which each of ``workers`` takes a unit, then each runs a slice of ``size`` executions.

    ``fate(unit)`` may instead say that the unit's worker died: outside any
    execution (``"give back"``) or in one (``"lose"``).
    """
    share = DfsShare(bound)
    results: list[ExecutionResult] = []

    def execute(search: DfsStrategy, number: int) -> ExecutionResult:
        result = run(search.chooser_for(number))
        results.append(result)
        return result

    while True:
        units = [unit for unit in (share.take(deepest=worker == 0) for worker in range(workers)) if unit is not None]
        if not units:
            break
        for unit in units:
            if fate(unit) == "give back":
                share.give_back(unit)
                continue
            if fate(unit) == "lose":
                share.lose(unit)
                continue
            done = run_slice(bound, unit.prefix, SliceLimits(size), execute, lambda footprint, unit=unit: share.footprint(unit, footprint))
            share.absorb(unit, done)
    return results, share


def runner_for(target_text: str, world_size: int) -> tuple[LoadedTarget, object]:
    target = LoadedTarget(TargetSpec.parse(target_text), "auto")
    return target, framework_named(target.framework, world_size)


@pytest.mark.parametrize("bound", [None, 1])
@pytest.mark.parametrize(
    "target",
    ["threads_counter.py:locked", "threads_counter.py:unlocked", "dpor_threads.py:check_then_act", "threads_lock_order.py:main"],
)
def test_workers_explore_exactly_the_schedules_of_one_process_once_each(target: str, bound: int | None) -> None:
    loaded, framework = runner_for(f"{PROGRAMS}/{target}", 2)
    with framework.activate():

        def run(chooser: Chooser) -> ExecutionResult:
            return run_execution(loaded, framework, chooser)

        alone, search = one_process(run, bound)
        for workers, size in ((2, 1), (3, 2)):
            shared, share = divided(run, bound, workers, size)
            digests = [digest(result) for result in shared]
            assert len(digests) == len(set(digests)), "a schedule was explored twice"
            assert set(digests) == {digest(result) for result in alone}
            assert share.summary().verified() == search.verified()
            assert share.summary().verified() is not None


def test_a_search_stopped_with_branches_left_is_not_verified() -> None:
    loaded, framework = runner_for(f"{PROGRAMS}/threads_counter.py:locked", 2)
    share = DfsShare(None)
    with framework.activate():
        unit = share.take(deepest=True)
        assert unit is not None
        done = run_slice(None, unit.prefix, SliceLimits(3), lambda search, n: run_execution(loaded, framework, search.chooser_for(n)))
        share.absorb(unit, done)
    assert done.executions == 3 and not done.exhausted and share.pending()
    assert share.summary().verified() is None and not share.finished()


def test_a_unit_whose_worker_died_between_executions_is_explored_again_and_the_search_still_verifies() -> None:
    loaded, framework = runner_for(f"{PROGRAMS}/dpor_threads.py:check_then_act", 2)
    given_back: set[int] = set()

    def fate(unit: Unit) -> str:
        if unit.number in (2, 3) and unit.number not in given_back:
            given_back.add(unit.number)
            return "give back"
        return "run"

    with framework.activate():

        def run(chooser: Chooser) -> ExecutionResult:
            return run_execution(loaded, framework, chooser)

        alone, search = one_process(run, None)
        shared, share = divided(run, None, 2, 1, fate)
    assert given_back == {2, 3}
    digests = [digest(result) for result in shared]
    assert len(digests) == len(set(digests)) and set(digests) == {digest(result) for result in alone}
    assert share.summary().verified() == search.verified() is not None


def test_a_unit_whose_worker_died_in_an_execution_is_lost_and_nothing_is_verified() -> None:
    loaded, framework = runner_for(f"{PROGRAMS}/dpor_threads.py:check_then_act", 2)
    with framework.activate():

        def run(chooser: Chooser) -> ExecutionResult:
            return run_execution(loaded, framework, chooser)

        alone, _ = one_process(run, None)
        shared, share = divided(run, None, 2, 1, lambda unit: "lose" if unit.number == 2 else "run")
    digests = {digest(result) for result in shared}
    # The rest of the tree is still explored, each schedule once, and only schedules of the program.
    assert 0 < len(digests) == len(shared) and digests < {digest(result) for result in alone}
    assert share.lost == 1 and not share.finished()
    assert share.summary().verified() is None


@settings(
    max_examples=6,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture],
)
@given(source=thread_programs())
def test_divided_dfs_sees_every_bug_and_final_state_brute_force_sees(tmp_path: Path, source: str) -> None:
    path = tmp_path / "generated.py"
    path.write_text(source, encoding="utf-8")
    loaded, framework = runner_for(f"{path}:main", 2)
    with framework.activate():

        def run(chooser: Chooser) -> ExecutionResult:
            return run_execution(loaded, framework, chooser)

        try:
            brute = [schedule.result for schedule in all_schedules(run, limit=BRUTE_FORCE_LIMIT)]
        except ValueError:
            assume(False)  # too many schedules to count: not a small program
        shared, _ = divided(run, None, workers=3, size=1)
    brute_bugs, brute_finals = outcomes(brute)
    bugs, finals = outcomes(shared)
    assert brute_bugs <= bugs, source
    assert brute_finals <= finals, source


def run_cli(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dnsse.cli", *arguments], capture_output=True, text=True, timeout=600)


def test_two_worker_processes_exhaust_dfs_with_the_single_process_verdict(tmp_path: Path) -> None:
    reports = {}
    for workers in ("1", "2"):
        report = tmp_path / f"r{workers}.json"
        done = run_cli(
            "check", f"{PROGRAMS}/threads_counter.py:locked", "--strategy", "dfs", "--workers", workers,
            "--out", str(tmp_path), "--json", str(report),
        )
        assert done.returncode == 0, done.stdout + done.stderr
        reports[workers] = json.loads(report.read_text())
    assert reports["2"]["verified"] is not None
    assert reports["2"]["verified"]["covers"] == reports["1"]["verified"]["covers"]
    assert reports["2"]["executions"] == reports["1"]["executions"]


def test_two_worker_processes_find_the_deadlock_and_its_trace_replays(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    found = run_cli(
        "check", f"{PROGRAMS}/threads_lock_order.py:main", "--strategy", "dfs", "--workers", "2",
        "--out", str(tmp_path), "--json", str(report),
    )
    assert found.returncode == 1, found.stdout + found.stderr
    data = json.loads(report.read_text())
    assert [bug["kind"] for bug in data["bugs"]] == ["deadlock"]
    assert data["verified"] is None
    replayed = run_cli("replay", data["bugs"][0]["trace"])
    assert replayed.returncode == 1 and "reproduced" in replayed.stdout, replayed.stdout + replayed.stderr


def test_a_budget_smaller_than_the_tree_is_spent_exactly_and_not_verified(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    done = run_cli(
        "check", f"{PROGRAMS}/threads_counter.py:locked", "--strategy", "dfs", "--preemption-bound", "1",
        "--workers", "2", "--budget", "10", "--out", str(tmp_path), "--json", str(report),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(report.read_text())
    assert data["executions"] == 10 and data["verified"] is None
    assert "did not finish its search within the budget" in done.stdout
