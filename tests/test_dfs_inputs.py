"""dfs enumerates the values of explored inputs, and says so when it cannot.

A statement such as "verified" for a program whose bug needs an input value
the user asked to explore (``Range``, ``bool``, ``Literal``, an enum) would
be false. dfs takes each input value as a value choice before the first
step, so every value gets a search of its own schedules; an input with more
values than it enumerates (a float, a tensor, a wide Range) keeps its
default, and then the search states nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from dnsse.engine.choices import Chooser
from dnsse.engine.runner import ExecutionResult, run_execution
from dnsse.engine.target import LoadedTarget, TargetSpec
from dnsse.frameworks.base import framework_named
from dnsse.search.brute_force import all_schedules
from dnsse.search.dfs import DfsStrategy
from dnsse.search.dfs_state import dfs_state, restore_dfs

PROGRAM = Path(__file__).parent / "programs" / "dfs_inputs.py"


def run_cli(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dnsse", *arguments], capture_output=True, text=True, timeout=600)


def check(tmp_path: Path, function: str, *options: str) -> tuple[subprocess.CompletedProcess, dict]:
    report = tmp_path / "report.json"
    done = run_cli(
        "check", f"{PROGRAM}:{function}", "--strategy", "dfs", "--budget", "5000",
        "--out", str(tmp_path / "out"), "--json", str(report), *options,
    )
    return done, json.loads(report.read_text())


def test_a_bug_that_needs_one_value_of_a_ranged_int_is_found_and_replays(tmp_path: Path) -> None:
    done, report = check(tmp_path, "third_value_fails")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "inputs: n=3" in done.stdout
    assert report["verified"] is None
    [bug] = report["bugs"]
    assert bug["kind"] == "exception" and "n is 3" in bug["message"]
    replay = run_cli("replay", bug["trace"])
    assert replay.returncode == 1, replay.stdout + replay.stderr


def test_a_race_that_needs_a_bool_input_is_found(tmp_path: Path) -> None:
    done, report = check(tmp_path, "early_read")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "inputs: fast=True" in done.stdout
    assert "read before the write" in report["bugs"][0]["message"]


def test_a_correct_program_is_verified_for_every_combination_of_its_inputs(tmp_path: Path) -> None:
    done, report = check(tmp_path, "locked_with_modes")
    assert done.returncode == 0, done.stdout + done.stderr
    verified = report["verified"]
    assert verified is not None and "explored inputs" in verified["covers"]
    # Two bools by three modes: at least one execution for each of the 6 combinations.
    assert report["executions"] >= 6


def test_an_input_with_too_many_values_keeps_its_default_and_nothing_is_verified(tmp_path: Path) -> None:
    done, report = check(tmp_path, "scaled")
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["verified"] is None
    assert "--input NAME=VALUE" in report["unverified_reason"]
    assert "not verified:" in done.stdout
    assert "verified (" not in done.stdout


def test_pinning_that_input_gives_a_statement_again(tmp_path: Path) -> None:
    done, report = check(tmp_path, "scaled", "--input", "scale=0.25")
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["verified"] is not None
    assert "pinned with --input" in report["verified"]["excludes"]


def test_dfs_divided_among_workers_enumerates_inputs_too(tmp_path: Path) -> None:
    done, report = check(tmp_path, "third_value_fails", "--workers", "2")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "n is 3" in report["bugs"][0]["message"]


def _outcomes(results: list[ExecutionResult]) -> tuple[set, set]:
    bugs = {r.bug.signature() for r in results if r.bug is not None}
    finals = {e.fields["state"] for r in results for e in r.events if e.name == "final"}
    return bugs, finals


def test_dfs_sees_every_bug_and_final_state_brute_force_sees_over_inputs_and_schedules() -> None:
    target = LoadedTarget(TargetSpec.parse(f"{PROGRAM}:counter"), "threads")
    framework = framework_named(target.framework, 1)
    with framework.activate():

        def run(chooser: Chooser) -> ExecutionResult:
            return run_execution(target, framework, chooser)

        brute = [schedule.result for schedule in all_schedules(run, limit=2_000)]
        strategy = DfsStrategy()
        explored = []
        while not strategy.exhausted:
            result = run(strategy.chooser_for(len(explored)))
            strategy.observe(result)
            explored.append(result)
    brute_bugs, brute_finals = _outcomes(brute)
    dfs_bugs, dfs_finals = _outcomes(explored)
    # Every input combination ran (guard x step), and the lost update without the lock was seen.
    assert {state.split(",")[0] + "," + state.split(",")[1] for state in brute_finals} == {
        "('lock', 1", "('lock', 2", "('none', 1", "('none', 2",
    }
    assert any("lost an update" in str(signature) for signature in brute_bugs)
    assert brute_bugs <= dfs_bugs
    assert brute_finals <= dfs_finals
    assert len(explored) < len(brute)


def test_a_saved_search_from_before_input_enumeration_still_resumes() -> None:
    search = DfsStrategy()
    state = dfs_state(search)
    del state["inputs_kept"]
    restored = DfsStrategy()
    restore_dfs(restored, state)
    assert restored.inputs_kept == 0
