"""Placement groups: bundles reserved from the cluster, tasks and actors drawing from them (Ray's docs)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers import run_ray

from dnsse.engine.bugs import BugKind

PROGRAM = Path(__file__).parent / "programs" / "ray_placement_groups.py"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dnsse.cli", *args], capture_output=True, text=True, timeout=600)


def outcomes(function: str, seeds: int = 30) -> list:
    return run_ray(f"{PROGRAM.name}:{function}", seeds=range(seeds), faults=False)


def test_a_correct_program_using_placement_groups_passes_the_cli_with_exit_0(tmp_path: Path) -> None:
    done = cli("check", f"{PROGRAM}:reserve_then_run", "--budget", "30", "--out", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no bug found" in done.stdout


def test_groups_wait_for_each_others_resources_and_nested_tasks_share_a_bundle() -> None:
    for function in ("reserve_then_run", "pending_until_released", "child_waits_for_parents_bundle"):
        results = outcomes(function)
        assert [r.bug.render() for r in results if r.bug is not None] == [], function


def test_a_group_larger_than_the_cluster_is_a_deadlock_naming_it_and_replays(tmp_path: Path) -> None:
    found = cli("check", f"{PROGRAM}:too_big_for_the_cluster", "--budget", "20", "--out", str(tmp_path))
    assert found.returncode == 1, found.stdout + found.stderr
    assert "deadlock" in found.stdout and "placement_group#1 'big'" in found.stdout
    assert "4 CPU, more than the whole cluster has (2 CPU, from ray.init): it can never start" in found.stdout
    traces = sorted(tmp_path.glob("bug-*.json"))
    assert traces
    replayed = cli("replay", str(traces[0]))
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "reproduced" in replayed.stdout and "placement_group#1 'big'" in replayed.stdout


def test_actors_oversubscribing_their_bundle_wait_for_it_although_the_cluster_has_room() -> None:
    results = outcomes("actors_oversubscribe_their_bundle", seeds=10)
    assert all(r.bug is not None and r.bug.kind == BugKind.DEADLOCK for r in results)
    assert any("1 CPU to be free in bundle 0 of placement_group#1 (it reserved 1 CPU; held by Counter#" in d
               for r in results for d in r.bug.details)


def test_a_demand_no_bundle_can_hold_is_refused_at_submission_as_ray_refuses_it() -> None:
    result = outcomes("bundle_too_small", seeds=1)[0]
    assert result.bug is not None and result.bug.kind == BugKind.EXCEPTION
    assert "cannot fit into any bundles for the placement group" in result.bug.message


REMOVAL = Path(__file__).parent / "programs" / "ray_placement_removal.py"


def removal_outcomes(function: str, seeds: int = 20) -> list:
    return run_ray(f"{REMOVAL.name}:{function}", seeds=range(seeds), faults=False)


def test_removing_a_group_before_reading_its_tasks_result_is_found_and_replays(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    found = cli("check", f"{REMOVAL}:removed_before_the_result_is_read", "--out", str(tmp_path / "traces"),
                "--json", str(report))
    assert found.returncode == 1, found.stdout + found.stderr
    [bug] = json.loads(report.read_text())["bugs"]
    assert bug["kind"] == "exception"
    assert bug["message"].startswith("TaskPlacementGroupRemoved: The placement group corresponding to this task "
                                     "has been removed (square#1 never started)")
    replayed = cli("replay", bug["trace"])
    assert replayed.returncode == 1 and "reproduced" in replayed.stdout, replayed.stdout + replayed.stderr
    done = cli("check", f"{REMOVAL}:result_read_before_removal", "--budget", "30", "--out", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr


def test_removal_kills_the_actors_and_running_tasks_placed_in_the_group_as_ray_does() -> None:
    # Measured with Ray 2.60: ActorDiedError, ActorUnschedulableError, WorkerCrashedError (max_retries=0).
    for function in ("removal_kills_actors", "removal_kills_a_running_task"):
        results = removal_outcomes(function)
        assert [r.bug.render() for r in results if r.bug is not None] == [], function


def test_a_task_killed_by_the_removal_and_retried_by_default_never_finishes() -> None:
    # Ray 2.60 retries it (max_retries defaults to 3) in the removed group, where it waits for good.
    [result] = removal_outcomes("removal_while_a_retried_task_runs", seeds=1)
    assert result.bug is not None and result.bug.kind == BugKind.DEADLOCK
    assert any("placement_group#1, which was removed while held#1 ran in it: Ray retries the task there" in d
               for d in result.bug.details)


def test_child_tasks_run_in_the_group_only_when_it_captures_them() -> None:
    for function in ("capture_child_tasks", "uncaptured_actors_fit_the_cluster"):
        results = removal_outcomes(function, seeds=10)
        assert [r.bug.render() for r in results if r.bug is not None] == [], function


def test_actors_of_a_captured_task_outgrowing_the_group_deadlock_and_replay(tmp_path: Path) -> None:
    found = cli("check", f"{REMOVAL}:captured_actors_outgrow_their_group", "--budget", "20", "--out", str(tmp_path))
    assert found.returncode == 1, found.stdout + found.stderr
    assert "deadlock" in found.stdout and "bundle 0 of placement_group#1" in found.stdout
    replayed = cli("replay", str(sorted(tmp_path.glob("bug-*.json"))[0]))
    assert replayed.returncode == 1 and "reproduced" in replayed.stdout, replayed.stdout + replayed.stderr
