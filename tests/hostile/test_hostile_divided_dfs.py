"""dfs divided among --workers: a worker the program kills is a crash bug, and the search goes on without claiming more."""

from __future__ import annotations

import json
from pathlib import Path

from hostile_cli import output, run_cli, target


def _divided(tmp_path: Path, function: str, *options: str) -> tuple[dict, str]:
    report = tmp_path / "report.json"
    found = run_cli(
        "check", target(f"crashes.py:{function}"), "--strategy", "dfs", "--workers", "2",
        "--out", str(tmp_path / "traces"), "--json", str(report), *options,
    )
    assert found.returncode == 1, output(found)
    return json.loads(report.read_text()), found.stdout


def _replays(bug: dict, says: str) -> None:
    replayed = run_cli("replay", bug["trace"])
    assert replayed.returncode == 1, output(replayed)
    assert "reproduced" in replayed.stdout and says in replayed.stdout


def test_a_worker_the_program_kills_is_a_crash_bug_whose_trace_replays(tmp_path: Path) -> None:
    data, _ = _divided(tmp_path, "segfault")
    [bug] = data["bugs"]
    assert bug["kind"] == "crash" and "killed by SIGSEGV" in bug["message"]
    assert any(line.startswith("in worker process ") for line in bug["details"])
    assert any("crashes.py" in line and "in worker" in line for line in bug["details"])
    assert data["verified"] is None
    _replays(bug, "killed by SIGSEGV")


def test_the_search_goes_on_after_a_crash_keeps_every_bug_and_verifies_nothing(tmp_path: Path) -> None:
    # One order of the two threads exits the process, the others may lose an update: both are bugs.
    data, stdout = _divided(tmp_path, "crash_or_lost_update", "--keep-going")
    kinds = sorted(bug["kind"] for bug in data["bugs"])
    assert kinds == ["crash", "exception"], stdout
    crash = next(bug for bug in data["bugs"] if bug["kind"] == "crash")
    race = next(bug for bug in data["bugs"] if bug["kind"] == "exception")
    assert "exited with status 5" in crash["message"] and "lost an update" in race["message"]
    _replays(crash, "exited with status 5")
    _replays(race, "lost an update")
    # The unit of the worker that died is not finished: nothing may be claimed for the tree.
    assert data["verified"] is None
    assert "verified (" not in stdout


def test_a_crash_stops_a_divided_search_without_keep_going_with_its_report(tmp_path: Path) -> None:
    data, stdout = _divided(tmp_path, "hard_exit")
    assert [bug["kind"] for bug in data["bugs"]] == ["crash"]
    assert "exited with status 7" in data["bugs"][0]["message"]
    assert data["executions"] >= 1 and "1 bug in" in stdout
