"""A wall-clock limit hit in code dnsse does not control is inconclusive: neither a bug nor a pass (DESIGN §1)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parent / "programs"


def run_cli(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dnsse.cli", *arguments], capture_output=True, text=True, timeout=600
    )


def check(tmp_path: Path, function: str, *options: str) -> tuple[subprocess.CompletedProcess, dict]:
    report = tmp_path / "report.json"
    done = run_cli(
        "check", f"{PROGRAMS / 'wall_clock.py'}:{function}", "--out", str(tmp_path / "traces"),
        "--json", str(report), *options,
    )
    return done, json.loads(report.read_text())


def test_a_thread_blocked_in_an_os_read_is_a_hang_bug_that_replays(tmp_path: Path) -> None:
    """A read of a pipe nobody writes hangs a real run: past the limit, blocked in the kernel, it is a hang."""
    done, report = check(tmp_path, "blocked_read", "--execution-timeout", "0.5", "--strategy", "random")
    assert done.returncode == 1, done.stdout + done.stderr
    [bug] = report["bugs"]
    assert bug["kind"] == "hang" and bug["execution"] == 1
    assert "Thread-1 (reader) is blocked in a call dnsse does not control" in bug["message"]
    assert "wall_clock.py:13 in reader" in bug["message"]
    assert report["inconclusive"] == []
    trace = json.loads(Path(bug["trace"]).read_text())
    standing = "\n".join(trace["bug"]["details"])
    assert "main: last scheduling point thread.join at wall_clock.py:17, waiting for Thread-1 (reader)" in standing
    replayed = run_cli("replay", bug["trace"])
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "reproduced" in replayed.stdout and "hang in Thread-1 (reader)" in replayed.stdout


def test_a_thread_still_computing_at_the_limit_is_inconclusive_not_a_bug(tmp_path: Path) -> None:
    done, report = check(tmp_path, "long_computation", "--execution-timeout", "0.5", "--strategy", "random")
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["bugs"] == [] and report["verified"] is None
    [run] = report["inconclusive"]
    assert run["execution"] == 1 and "longer than 0.5s" in run["message"]
    assert "a longer --execution-timeout decides whether it ends" in run["message"]
    standing = "\n".join(run["details"])
    assert "Thread-1 (hasher): last scheduling point start; running since, never came back" in standing
    assert "wall_clock.py:24 in hasher" in standing
    assert "main: last scheduling point thread.join at wall_clock.py:28, waiting for Thread-1 (hasher)" in standing
    assert "execution 1 was inconclusive, neither a bug nor a pass" in done.stdout
    assert "1 inconclusive" in done.stdout
    assert "dnsse: warning: 1 execution hit the wall-clock limit" in done.stderr
    assert not list((tmp_path / "traces").glob("bug-*.json"))


@pytest.mark.slow
def test_keep_going_judges_every_execution_and_records_each_inconclusive_one(tmp_path: Path) -> None:
    done, report = check(
        tmp_path, "long_computation", "--execution-timeout", "0.5", "--strategy", "random", "--keep-going",
        "--budget", "2",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["executions"] == 2 and report["bugs"] == []
    assert [run["execution"] for run in report["inconclusive"]] == [1, 2]


def test_an_exhausted_dfs_with_an_inconclusive_execution_verifies_nothing(tmp_path: Path) -> None:
    done, report = check(tmp_path, "long_computation", "--execution-timeout", "0.5", "--strategy", "dfs")
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["verified"] is None
    assert "hit the wall-clock limit" in report["unverified_reason"]
    assert "verified (" not in done.stdout
    assert "not verified: dfs ran every schedule it could tell apart, but 1 execution hit" in done.stdout


def test_the_step_limit_is_still_a_livelock_bug(tmp_path: Path) -> None:
    done, report = check(tmp_path, "livelock", "--max-steps", "300", "--strategy", "random")
    assert done.returncode == 1, done.stdout + done.stderr
    assert [bug["kind"] for bug in report["bugs"]] == ["timeout"]
    assert report["inconclusive"] == []
