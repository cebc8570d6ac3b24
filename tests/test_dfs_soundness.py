"""Unbounded dfs finds races hidden in builtins, and says "verified" only when it saw every step.

Each program's race goes through an access that is not a plain attribute
load or store (``in``, iteration, a method called through a local alias,
``setattr``): dfs must report the bug, with exit status 1, through the CLI.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parent / "programs"


def check(tmp_path: Path, spec: str, *options: str) -> tuple[subprocess.CompletedProcess, dict]:
    report = tmp_path / "report.json"
    command = [sys.executable, "-m", "dnsse.cli", "check", str(PROGRAMS / spec), "--strategy", "dfs"]
    command += ["--out", str(tmp_path / "out"), "--json", str(report), *options]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=600)
    return completed, json.loads(report.read_text(encoding="utf-8"))


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("check_then_act", "the model was loaded 2 times"),
        ("iterate_while_insert", "dictionary changed size during iteration"),
        ("alias_append", "another append came in between"),
        ("setattr_flag", "consumed before publish"),
    ],
)
def test_unbounded_dfs_finds_a_race_through_builtins(tmp_path: Path, function: str, message: str) -> None:
    completed, report = check(tmp_path, f"dpor_threads.py:{function}")
    assert completed.returncode == 1, completed.stdout + completed.stderr
    assert [bug["kind"] for bug in report["bugs"]] == ["exception"]
    assert message in report["bugs"][0]["message"]
    assert report["verified"] is None


def test_a_correct_program_whose_every_step_was_seen_is_verified(tmp_path: Path) -> None:
    completed, report = check(tmp_path, "dpor_threads.py:lazy_init")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert report["verified"]["bound"] == "none"
    assert report["unverified_reason"] is None
    assert completed.stdout.strip().splitlines()[-1].startswith("verified (no bound")


def test_a_step_inside_untraced_library_code_is_not_verified_and_says_why(tmp_path: Path) -> None:
    completed, report = check(tmp_path, "dpor_threads.py:library_reads_shared_object")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert report["verified"] is None
    assert "copy.deepcopy" in report["unverified_reason"] and "not seen" in report["unverified_reason"]
    last = completed.stdout.strip().splitlines()[-1]
    assert last.startswith("not verified:") and "copy.deepcopy" in last


def test_the_preemption_bound_is_still_verified_when_a_step_was_not_seen(tmp_path: Path) -> None:
    completed, report = check(tmp_path, "dpor_threads.py:library_reads_shared_object", "--preemption-bound", "1")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert report["verified"]["bound"] == "preemptions<=1"
