"""ray.cancel of actor calls, recursive cancellation through actor calls, and the runtime context (Ray 2.60).

The correct programs here also pass under real Ray (tests/test_ray_real.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers import PROGRAMS, run_ray

from dnsse.engine.bugs import BugKind

PROGRAM = PROGRAMS / "ray_cancel_actors.py"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dnsse.cli", *args], capture_output=True, text=True, timeout=600)


def outcomes(function: str, seeds: int = 20) -> list:
    return run_ray(f"{PROGRAM.name}:{function}", seeds=range(seeds), faults=False)


def test_taking_a_cancelled_sync_call_for_one_that_did_not_run_is_found_and_replays(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    found = cli("check", f"{PROGRAM}:cancel_does_not_undo_a_sync_call", "--out", str(tmp_path / "traces"),
                "--json", str(report))
    assert found.returncode == 1, found.stdout + found.stderr
    [bug] = json.loads(report.read_text())["bugs"]
    assert bug["kind"] == "exception" and "the cancelled withdrawal happened" in bug["message"]
    replayed = cli("replay", bug["trace"])
    assert replayed.returncode == 1 and "reproduced" in replayed.stdout, replayed.stdout + replayed.stderr


def test_correct_cancellations_of_actor_calls_pass(tmp_path: Path) -> None:
    done = cli("check", f"{PROGRAM}:recursive_cancel_of_a_sync_call_reaches_its_task", "--budget", "30",
               "--out", str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    for function in ("cancel_a_sync_call_that_polls", "recursive_cancel_of_an_async_call_reaches_its_task",
                     "recursive_cancel_of_a_task_reaches_its_actor_call", "runtime_context_answers_as_ray_does"):
        results = outcomes(function)
        assert [r.bug.render() for r in results if r.bug is not None] == [], function


def test_without_recursive_the_child_of_a_cancelled_sync_call_waits_for_ever() -> None:
    results = outcomes("cancel_of_a_sync_call_leaves_its_task", seeds=3)
    assert all(r.bug is not None and r.bug.kind == BugKind.DEADLOCK for r in results)


def test_without_recursive_a_cancelled_tasks_queued_actor_call_still_runs() -> None:
    results = outcomes("cancel_of_a_task_leaves_its_actor_call", seeds=30)
    assert any(r.bug is not None and "the cancelled task's append ran" in r.bug.message for r in results)
    assert any(r.bug is None for r in results)
