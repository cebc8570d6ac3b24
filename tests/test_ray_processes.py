"""Ray's worker processes are reused across tasks: what a task leaves in its process's globals stays there.

The programs are in tests/programs/ray_processes (a driver and a module it
imports). What a program sees on a one-CPU cluster is compared with real Ray
in tests/test_ray_real.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers import PROGRAMS, run_ray

from dnsse.engine.bugs import BugKind

PROGRAM = PROGRAMS / "ray_processes" / "processes.py"


def run_cli(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dnsse.cli", *arguments], capture_output=True, text=True,
                          timeout=600)


def outcomes(function: str, seeds: int = 20) -> list:
    return run_ray(f"ray_processes/{PROGRAM.name}:{function}", seeds=range(seeds), faults=False)


def test_a_cache_that_works_only_when_two_tasks_share_a_process_is_found_and_replays(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    found = run_cli("check", f"{PROGRAM}:cache_filled_by_another_task", "--out", str(tmp_path / "traces"),
                    "--json", str(report))
    assert found.returncode == 1, found.stdout + found.stderr
    [bug] = json.loads(report.read_text())["bugs"]
    assert bug["kind"] == "exception"
    assert bug["message"] == "RayTaskError(KeyError): ray::lookup() failed with KeyError: 'w'"
    trace = json.loads(Path(bug["trace"]).read_text())
    assert any(choice[0] == "worker" for choice in trace["choices"])
    replayed = run_cli("replay", bug["trace"])
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "reproduced" in replayed.stdout
    # Which process the failing task ran in, as Ray names its pid.
    assert "raised in ray::lookup() (worker process 2):" in replayed.stdout


def test_on_one_cpu_every_task_shares_the_one_process_so_the_same_cache_always_works(tmp_path: Path) -> None:
    done = run_cli("check", f"{PROGRAM}:cache_filled_by_another_task_on_one_cpu", "--budget", "40",
                   "--out", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr


def test_correct_programs_pass_reuse_or_not(tmp_path: Path) -> None:
    for function in ("one_process_reuses_globals", "globals_stay_in_processes", "max_calls_retires_the_process"):
        done = run_cli("check", f"{PROGRAM}:{function}", "--budget", "40", "--out", str(tmp_path))
        assert done.returncode == 0, function + done.stdout + done.stderr


def test_tasks_land_on_a_used_process_in_some_schedules_and_a_new_one_in_others() -> None:
    results = outcomes("every_task_in_a_new_process")
    reused = [r for r in results if r.bug is not None]
    assert reused and all("AssertionError" in r.bug.message for r in reused)
    assert any(r.bug is None for r in results)


def test_an_actor_runs_in_a_process_of_its_own_without_the_tasks_cache() -> None:
    results = outcomes("cache_read_by_an_actor", seeds=5)
    assert all(r.bug is not None and r.bug.kind == BugKind.EXCEPTION for r in results)


def test_a_task_whose_process_cannot_matter_asks_no_worker_choice() -> None:
    [result] = run_ray("ray_semantics.py:tasks_and_errors", seeds=[0], faults=False)
    assert result.bug is None
    assert not any(choice.kind == "worker" for choice in result.choices)
