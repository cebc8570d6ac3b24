"""Whatever a target does to its process, the campaign survives it and reports a crash that replays."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_cli import output, run_cli, target


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("segfault", "killed by SIGSEGV"),
        ("hard_exit", "exited with status 7"),
        ("alarm", "killed by SIGALRM"),
        ("killed", "killed by SIGKILL"),
    ],
)
def test_a_process_killing_target_is_a_crash_bug_whose_trace_replays(
    function: str, message: str, tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    found = run_cli(
        "check", target(f"crashes.py:{function}"), "--budget", "50", "--strategy", "random",
        "--out", str(tmp_path / "traces"), "--json", str(report),
    )
    assert found.returncode == 1, output(found)
    data = json.loads(report.read_text())
    [bug] = data["bugs"]
    assert bug["kind"] == "crash" and message in bug["message"]
    assert data["executions"] == bug["execution"]
    assert any("was running, after its scheduling point" in line for line in bug["details"])
    trace = json.loads(Path(bug["trace"]).read_text())
    assert trace["bug"]["kind"] == "crash" and trace["choices"]
    replayed = run_cli("replay", bug["trace"])
    assert replayed.returncode == 1, output(replayed)
    assert "reproduced" in replayed.stdout and message in replayed.stdout


def test_a_segfault_names_the_agent_and_the_line(tmp_path: Path) -> None:
    found = run_cli("check", target("crashes.py:segfault"), "--strategy", "random", "--out", str(tmp_path))
    assert found.returncode == 1, output(found)
    assert "crash in Thread-" in found.stdout and "(worker)" in found.stdout
    assert 'crashes.py", line 16 in worker' in found.stdout


def test_the_campaign_goes_on_after_a_crash_and_reports_it_once(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    found = run_cli(
        "check", target("crashes.py:sometimes_exits"), "--keep-going", "--budget", "12", "--strategy", "random",
        "--out", str(tmp_path / "traces"), "--json", str(report),
    )
    assert found.returncode == 1, output(found)
    data = json.loads(report.read_text())
    assert data["executions"] == 12
    assert [bug["kind"] for bug in data["bugs"]] == ["crash"]
    assert found.stdout.count("dnsse: checking") == 1
    assert [path.name for path in (tmp_path / "traces").glob("bug-*.json")] == ["bug-1.json"]


def test_a_thread_pool_deadlock_is_reported_and_neither_check_nor_replay_hangs(tmp_path: Path) -> None:
    found = run_cli("check", target("hangs.py:pool_deadlock"), "--out", str(tmp_path), timeout=600)
    assert found.returncode == 1, output(found)
    assert "deadlock" in found.stdout
    replayed = run_cli("replay", str(tmp_path / "bug-1.json"), timeout=600)
    assert replayed.returncode == 1 and "reproduced" in replayed.stdout, output(replayed)


def test_threads_that_will_not_stop_are_left_behind_with_their_process(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    found = run_cli(
        "check", target("hangs.py:spinner"), "--keep-going", "--budget", "4", "--execution-timeout", "0.5",
        "--no-minimize", "--out", str(tmp_path / "traces"), "--json", str(report), timeout=600,
    )
    assert found.returncode == 0, output(found)
    data = json.loads(report.read_text())
    assert data["executions"] == 4
    # Spinning outside every scheduling point is past what dnsse can judge: inconclusive, not a bug.
    assert data["bugs"] == []
    # Only schedules that hand the spinner the baton hang; the others end when main does.
    assert data["inconclusive"] and data["inconclusive"][0]["execution"] == 1
    # The spinner is caught on either line of its loop: the loop's test or its body.
    details = data["inconclusive"][0]["details"]
    assert any(re.search(r"hangs\.py:2[23] in spin", line) for line in details), details
    # The main thread is not blocked: its lock is free, it only never got its turn back.
    assert any(line.startswith("main:") and "ready to go on" in line for line in details), details


def test_executions_leave_no_directory_behind_even_when_the_process_dies(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    found = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", target("crashes.py:hard_exit"), "--out", str(tmp_path / "t")],
        capture_output=True, text=True, timeout=600, env={**os.environ, "TMPDIR": str(scratch)},
    )
    assert found.returncode == 1, output(found)
    assert list(scratch.iterdir()) == []


def test_a_program_that_exits_with_dnsse_own_status_is_a_crash_in_check_and_replay(tmp_path: Path) -> None:
    found = run_cli("check", target("crashes.py:exits_three"), "--out", str(tmp_path))
    assert found.returncode == 1, output(found)
    assert "crash" in found.stdout and "exited with status 3" in found.stdout
    replayed = run_cli("replay", str(tmp_path / "bug-1.json"))
    assert replayed.returncode == 1, output(replayed)
    assert "reproduced" in replayed.stdout and "exited with status 3" in replayed.stdout
