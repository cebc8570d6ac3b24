"""A threads program ends as its real process does: threading's exit callbacks, then non-daemon threads.

Each program runs plainly in a child Python first (the reference: does a real
run exit, or hang at its end?), then under ``dnsse check``: a program that
exits must pass, one that hangs must be a deadlock.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = Path(__file__).parent / "programs" / "process_exit_programs.py"
TORCH_PROGRAM = Path(__file__).parent / "programs" / "process_exit_torch.py"
# A real run still going after this long is taken to hang at its exit. Only the programs expected to
# hang are judged by it; a program expected to exit is waited for (600 s: a safety net), so a
# loaded machine can make neither verdict wrong.
HANG_SECONDS = 5


def exits_plainly(function: str, *, expected_to_hang: bool) -> bool:
    """Whether a real run of ``function`` as a script's main ends (True) or hangs at exit (False)."""
    code = (
        f"import importlib.util, sys; spec = importlib.util.spec_from_file_location('p', {str(PROGRAM)!r}); "
        f"module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module); module.{function}()"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, timeout=HANG_SECONDS if expected_to_hang else 600
        )
    except subprocess.TimeoutExpired:
        return False
    assert done.returncode == 0, done.stderr
    return True


def check(function: str, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dnsse", "check", f"{PROGRAM}:{function}", "--strategy", "random",
         "--budget", "30", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )


@pytest.mark.parametrize(
    "function", ["pool_never_shut_down", "module_pool", "exit_with_the_pool_open", "own_exit_callback"]
)
def test_a_program_whose_real_run_exits_passes(function: str, tmp_path: Path) -> None:
    assert exits_plainly(function, expected_to_hang=False)
    done = check(function, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no bug found: 0 bugs in 30 executions" in done.stdout


@pytest.mark.parametrize(
    ("function", "waiting"),
    [("task_still_waiting_at_exit", "ThreadPoolExecutor"), ("thread_left_waiting", "forgotten")],
)
def test_a_program_whose_real_run_hangs_at_exit_is_a_deadlock(function: str, waiting: str, tmp_path: Path) -> None:
    assert not exits_plainly(function, expected_to_hang=True)
    done = check(function, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "deadlock" in done.stdout
    assert waiting in done.stdout


def test_exit_callbacks_registered_after_the_end_began_are_refused_as_cpython_does() -> None:
    from dnsse.frameworks.threads.process_exit import ProcessExit

    ran: list[str] = []
    process_exit = ProcessExit([])
    process_exit.register(ran.append, "first")
    process_exit.register(lambda: process_exit.register(ran.append, "late"))
    with pytest.raises(RuntimeError, match="can't register atexit after shutdown"):
        process_exit.end()
    assert ran == []  # newest first: the late registration failed before "first" ran


@pytest.mark.torch
def test_torch_ranks_end_with_their_own_pools(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dnsse", "check", f"{TORCH_PROGRAM}:pools_per_rank", "--world-size", "2",
         "--strategy", "random", "--budget", "40", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no bug found: 0 bugs in 40 executions" in done.stdout


@pytest.mark.torch
def test_a_rank_whose_pool_task_never_ends_cannot_end(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dnsse", "check", f"{TORCH_PROGRAM}:rank_task_never_done", "--world-size", "2",
         "--strategy", "random", "--budget", "40", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "deadlock" in done.stdout and "recv" in done.stdout
