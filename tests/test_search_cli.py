"""``dnsse check --strategy dfs|pos`` from the command line: exit codes and what was verified."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROGRAMS = Path(__file__).parent / "programs"


def run_cli(*arguments: str) -> subprocess.CompletedProcess:
    """The real command, in a child process, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "dnsse.cli", *arguments], capture_output=True, text=True, timeout=600
    )


def test_dfs_on_a_correct_program_exits_0_and_says_what_it_verified(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = run_cli(
        "check", f"{PROGRAMS / 'search_threads.py'}:locked_counter", "--strategy", "dfs",
        "--out", str(tmp_path), "--json", str(report),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("verified (no bound, ")
    assert "every schedule is equivalent to an executed one" in last
    assert "C extensions" in last
    verified = json.loads(report.read_text())["verified"]
    assert verified["bound"] == "none"
    assert verified["executions"] == json.loads(report.read_text())["executions"]


def test_dfs_with_a_preemption_bound_reports_the_bound(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = run_cli(
        "check", f"{PROGRAMS / 'search_threads.py'}:locked_counter", "--strategy", "dfs",
        "--preemption-bound", "1", "--out", str(tmp_path), "--json", str(report),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every schedule with at most 1 preemptions" in done.stdout.strip().splitlines()[-1]
    assert json.loads(report.read_text())["verified"]["bound"] == "preemptions<=1"


def test_dfs_on_a_buggy_program_exits_1_and_verifies_nothing(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = run_cli(
        "check", f"{PROGRAMS / 'search_threads.py'}:lost_update", "--strategy", "dfs",
        "--out", str(tmp_path), "--json", str(report),
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "lost update" in done.stdout
    assert json.loads(report.read_text())["verified"] is None


def test_dfs_cut_short_by_the_budget_says_nothing_was_verified(tmp_path: Path) -> None:
    done = run_cli(
        "check", f"{PROGRAMS / 'search_threads.py'}:write_read", "--strategy", "dfs", "--budget", "2",
        "--out", str(tmp_path),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith("not verified: dfs did not finish")


def test_pos_finds_a_bug_from_the_command_line(tmp_path: Path) -> None:
    program = f"{PROGRAMS / 'search_threads.py'}:lost_update"
    done = run_cli("check", program, "--strategy", "pos", "--out", str(tmp_path))
    assert done.returncode == 1, done.stdout + done.stderr


def test_a_preemption_bound_without_dfs_is_bad_input(tmp_path: Path) -> None:
    done = run_cli(
        "check", f"{PROGRAMS / 'search_threads.py'}:lost_update", "--strategy", "random",
        "--preemption-bound", "1", "--out", str(tmp_path),
    )
    assert done.returncode == 2
    assert "dfs strategy only" in done.stderr
