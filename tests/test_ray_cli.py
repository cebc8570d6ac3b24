"""``dnsse check`` and ``dnsse replay`` on Ray programs, as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers import PROGRAMS

from dnsse.campaign.trace import read_trace


def dnsse(*arguments: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dnsse.cli", *arguments], cwd=cwd, capture_output=True, text=True, timeout=600
    )


def test_check_finds_a_double_payment_under_retries_and_replay_reproduces_it(tmp_path: Path) -> None:
    checked = dnsse("check", f"{PROGRAMS / 'ray_retries.py'}:double_payment", "--budget", "200", cwd=tmp_path)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "(ray)" in checked.stdout and "exception in driver" in checked.stdout
    assert "AssertionError: paid 20, expected 10" in checked.stdout
    trace = tmp_path / ".dnsse" / "bug-1.json"
    assert json.loads(trace.read_text())["faults"] is True
    replayed = dnsse("replay", str(trace), cwd=tmp_path)
    assert replayed.returncode == 1 and "reproduced" in replayed.stdout


def test_check_reports_actors_calling_each_other_as_a_deadlock(tmp_path: Path) -> None:
    checked = dnsse("check", f"{PROGRAMS / 'ray_mutual.py'}:deadlock", "--budget", "20", cwd=tmp_path)
    assert checked.returncode == 1
    assert "deadlock" in checked.stdout and "Ping#1.ack#3 waits for Ping#1 to finish Ping#1.start#1" in checked.stdout
    replayed = dnsse("replay", str(tmp_path / ".dnsse" / "bug-1.json"), cwd=tmp_path)
    assert replayed.returncode == 1 and "reproduced" in replayed.stdout


def test_faults_off_finds_nothing_in_a_program_whose_only_bug_needs_a_crash(tmp_path: Path) -> None:
    checked = dnsse(
        "check", f"{PROGRAMS / 'ray_retries.py'}:double_payment", "--budget", "30", "--faults", "off", cwd=tmp_path
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "no bug found" in checked.stdout


def test_a_trace_recorded_with_faults_off_replays_with_faults_off(tmp_path: Path) -> None:
    checked = dnsse(
        "check", f"{PROGRAMS / 'ray_threaded.py'}:oversold", "--budget", "100", "--faults", "off", cwd=tmp_path
    )
    assert checked.returncode == 1
    trace = tmp_path / ".dnsse" / "bug-1.json"
    raw = json.loads(trace.read_text())
    assert raw["faults"] is False
    del raw["faults"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(raw))
    assert read_trace(old).faults is True  # traces written before the flag existed load as faults on
    replayed = dnsse("replay", str(trace), cwd=tmp_path)
    assert replayed.returncode == 1 and "reproduced" in replayed.stdout
