"""concurrent.futures executors and threading.local under control."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers import PROGRAMS, SeededChooser, controlled

from dnsse.engine.bugs import BugKind

PROGRAM = "threads_executor.py"


def outcomes(function: str, seeds: int = 20) -> list:
    with controlled(f"{PROGRAM}:{function}") as run:
        return [run(SeededChooser(seed)) for seed in range(seeds)]


def test_pool_workers_are_agents_so_a_correct_pool_program_passes() -> None:
    assert all(r.bug is None for r in outcomes("pool_sum"))
    assert all(r.bug is None for r in outcomes("pool_shared_by_threads"))


def test_a_lost_update_between_pool_workers_is_found() -> None:
    results = outcomes("pool_lost_update", seeds=40)
    assert any(r.bug is not None and r.bug.kind == BugKind.EXCEPTION for r in results)
    assert any(r.bug is None for r in results)


def test_a_task_waiting_for_a_task_queued_behind_it_is_a_deadlock() -> None:
    result = outcomes("pool_waits_for_itself", seeds=1)[0]
    assert result.bug is not None and result.bug.kind == BugKind.DEADLOCK
    assert "ThreadPoolExecutor-" in result.bug.message


def test_the_process_exits_after_a_pool_execution_was_cut_short(tmp_path: Path) -> None:
    # The executor's exit hook joins every pool thread, including those of the
    # aborted execution; the command must still end, quietly.
    finished = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", f"{PROGRAMS}/{PROGRAM}:pool_waits_for_itself",
         "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )
    assert finished.returncode == 1, finished.stdout + finished.stderr
    assert "deadlock" in finished.stdout
    assert "ExecutionAborted" not in finished.stderr


def test_threading_local_is_per_agent() -> None:
    assert all(r.bug is None for r in outcomes("thread_local_per_thread", seeds=10))
