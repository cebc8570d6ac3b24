"""With --workers N, a worker process that dies is a crash bug of its execution, and the campaign goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile_cli import output, run_cli, target


def _campaign(tmp_path: Path, function: str, *options: str) -> tuple[dict, str]:
    report = tmp_path / "report.json"
    found = run_cli(
        "check", target(f"crashes.py:{function}"), "--workers", "2", "--strategy", "random",
        "--out", str(tmp_path / "traces"), "--json", str(report), *options,
    )
    assert found.returncode == 1, output(found)
    return json.loads(report.read_text()), found.stdout


@pytest.mark.parametrize(
    ("function", "message"), [("segfault", "killed by SIGSEGV"), ("hard_exit", "exited with status 7")]
)
def test_a_worker_that_dies_is_a_crash_bug_whose_trace_replays(function: str, message: str, tmp_path: Path) -> None:
    data, _ = _campaign(tmp_path, function, "--budget", "40")
    [bug] = data["bugs"]
    assert bug["kind"] == "crash" and message in bug["message"]
    assert any(line.startswith("in worker process ") for line in bug["details"])
    assert any("was running, after its scheduling point" in line for line in bug["details"])
    replayed = run_cli("replay", bug["trace"])
    assert replayed.returncode == 1, output(replayed)
    assert "reproduced" in replayed.stdout and message in replayed.stdout


def test_the_dead_worker_is_replaced_and_no_bug_of_any_worker_is_lost(tmp_path: Path) -> None:
    data, stdout = _campaign(tmp_path, "crash_or_race", "--keep-going", "--budget", "16")
    assert data["executions"] == 16
    kinds = sorted(bug["kind"] for bug in data["bugs"])
    assert kinds == ["crash", "exception"], stdout
    race = next(bug for bug in data["bugs"] if bug["kind"] == "exception")
    assert "lost an update" in race["message"]
    for bug in data["bugs"]:
        replayed = run_cli("replay", bug["trace"])
        assert replayed.returncode == 1 and "reproduced" in replayed.stdout, output(replayed)


def test_a_crash_in_every_execution_ends_the_campaign_at_its_budget(tmp_path: Path) -> None:
    data, _ = _campaign(tmp_path, "sometimes_exits", "--keep-going", "--budget", "8", "--input", "flag=True")
    assert data["executions"] == 8
    assert [bug["kind"] for bug in data["bugs"]] == ["crash"]
