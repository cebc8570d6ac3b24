"""A program that replaces a builtin changes its own copy's, as one process of a real job does.

Ranks of a torch program are threads of one process under dnsse, but each
rank of a real job is a process with its own ``builtins``; the copy of the
target each rank (or execution) runs has a ``builtins`` module of its own.
"""

from __future__ import annotations

import builtins
import json
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parent / "programs"


def run_cli(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dnsse", *arguments], capture_output=True, text=True, timeout=600)


def test_a_print_replaced_for_good_does_not_reach_the_next_execution(tmp_path: Path) -> None:
    done = run_cli(
        "check", f"{PROGRAMS / 'own_builtins_threads.py'}:wraps_print_once", "--budget", "20",
        "--out", str(tmp_path),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no bug found: 0 bugs in 20 executions" in done.stdout
    assert builtins.print.__module__ == "builtins"


@pytest.mark.torch
def test_ranks_that_silence_print_leave_dnsse_its_report(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = run_cli(
        "check", f"{PROGRAMS / 'own_builtins_torch.py'}:quiet_ranks", "--world-size", "2", "--input", "fail=false",
        "--budget", "30",
        "--out", str(tmp_path), "--json", str(report),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no bug found: 0 bugs in 30 executions" in done.stdout
    assert json.loads(report.read_text())["executions"] == 30


@pytest.mark.torch
def test_only_the_rank_that_silenced_print_is_silent(tmp_path: Path) -> None:
    done = run_cli(
        "check", f"{PROGRAMS / 'own_builtins_torch.py'}:quiet_ranks", "--world-size", "2",
        "--input", "fail=true", "--budget", "30", "--out", str(tmp_path),
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "rank 1 fails after printing" in done.stdout
    # As in a real job of two processes: rank 0 prints, rank 1 prints only what it forces.
    assert "rank 0 sum [3.0, 3.0]" in done.stdout
    assert "rank 0 forced" in done.stdout
    assert "rank 1 forced" in done.stdout
    assert "rank 1 sum" not in done.stdout
