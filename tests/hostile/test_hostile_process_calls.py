"""Ordinary process-level calls in a target are no false bugs: sys.exit, signal handlers, processes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_cli import output, run_cli, target


@pytest.mark.parametrize("function", ["exit_zero", "exit_none"])
def test_sys_exit_with_status_zero_ends_the_program_normally(function: str, tmp_path: Path) -> None:
    result = run_cli("check", target(f"exits.py:{function}"), "--budget", "20", "--out", str(tmp_path))
    assert result.returncode == 0, output(result)
    assert "no bug found" in result.stdout


def test_sys_exit_with_a_non_zero_status_is_reported_as_that_status(tmp_path: Path) -> None:
    result = run_cli("check", target("exits.py:exit_three"), "--budget", "5", "--out", str(tmp_path))
    assert result.returncode == 1, output(result)
    assert "exception in main" in result.stdout and "SystemExit: 3" in result.stdout


def test_ranks_that_exit_zero_after_their_work_are_no_bug(tmp_path: Path) -> None:
    result = run_cli("check", target("torch_exits.py:main"), "--budget", "20", "--out", str(tmp_path))
    assert result.returncode == 0, output(result)


def test_a_module_that_exits_while_imported_is_bad_input_not_a_clean_run(tmp_path: Path) -> None:
    result = run_cli("check", target("exit_at_import.py:main"), "--out", str(tmp_path))
    assert result.returncode == 2, output(result)
    assert "called sys.exit(0)" in result.stderr


@pytest.mark.parametrize("spec", ["signals.py:main", "torch_signals.py:main"])
def test_signal_handlers_installed_by_a_target_are_accepted(spec: str, tmp_path: Path) -> None:
    result = run_cli("check", target(spec), "--budget", "20", "--out", str(tmp_path))
    assert result.returncode == 0, output(result)
    assert "signal only works in main thread" not in output(result)


@pytest.mark.parametrize("function", ["pool", "process_pool_executor"])
def test_starting_processes_is_refused_as_an_api_dnsse_does_not_control(function: str, tmp_path: Path) -> None:
    result = run_cli("check", target(f"processes.py:{function}"), "--budget", "5", "--out", str(tmp_path))
    assert result.returncode == 2, output(result)
    assert "starts a new process" in result.stderr and "processes.py:" in result.stderr
    assert "Traceback" not in output(result)


def test_threads_started_by_a_rank_are_controlled_and_their_deadlock_found(tmp_path: Path) -> None:
    result = run_cli("check", target("torch_threads.py:main"), "--budget", "200", "--out", str(tmp_path))
    assert result.returncode == 1, output(result)
    assert "deadlock" in result.stdout and "Thread-" in result.stdout and "(helper)" in result.stdout
    replayed = run_cli("replay", str(tmp_path / "bug-1.json"))
    assert replayed.returncode == 1 and "reproduced" in replayed.stdout, output(replayed)


def test_threads_started_by_a_rank_do_not_outlive_their_execution(tmp_path: Path) -> None:
    # Uncontrolled, every helper thread of every execution stayed alive; the campaign would not stay clean.
    result = run_cli("check", target("torch_threads.py:clean"), "--budget", "50", "--out", str(tmp_path))
    assert result.returncode == 0, output(result)
    assert "0 bugs in 50 executions" in result.stdout


@pytest.mark.parametrize(("framework", "function"), [("threads", "main"), ("torch", "per_rank"), ("ray", "main")])
def test_module_top_level_code_runs_outside_the_users_directory(
    framework: str, function: str, tmp_path: Path
) -> None:
    workdir = tmp_path / "work"
    workdir.mkdir()
    result = run_cli(
        "check", target(f"import_log.py:{function}"), "--framework", framework, "--budget", "20",
        "--out", str(tmp_path / "traces"), cwd=workdir,
    )
    assert result.returncode == 0, output(result)
    assert list(workdir.iterdir()) == []
