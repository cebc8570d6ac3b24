"""With --workers N, a worker process that dies is a crash bug of its execution, and the campaign goes on."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
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


@pytest.mark.parametrize(
    ("spec", "status", "says", "execution_timeout"),
    [
        # The spinner never ends: a short limit makes it inconclusive sooner. The others end by themselves,
        # long before a limit far above what they take on a loaded machine.
        ("hangs.py:pool_deadlock", 1, "deadlock", "120"),
        ("hangs.py:spinner", 0, "inconclusive", "2"),
        ("processes.py:pool", 2, "multiprocessing", "120"),
    ],
)
def test_no_hostile_target_hangs_a_campaign_of_two_workers(
    spec: str, status: int, says: str, execution_timeout: str, tmp_path: Path
) -> None:
    # run_cli's timeout turns a hang into a failure.
    result = run_cli(
        "check", target(spec), "--workers", "2", "--budget", "4", "--keep-going", "--execution-timeout", execution_timeout,
        "--out", str(tmp_path), timeout=600,
    )
    assert result.returncode == status, output(result)
    assert says in output(result)


def test_ctrl_c_stops_a_campaign_of_two_workers_with_its_report(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    process = subprocess.Popen(
        [sys.executable, "-m", "dnsse.cli", "check", target("slow.py:racy"), "--input", "rounds=30", "--workers", "2",
         "--strategy", "random", "--keep-going", "--budget", "100000", "--out", str(tmp_path / "traces"),
         "--json", str(report)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert process.stdout is not None
    assert "dnsse: checking" in process.stdout.readline()
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 130, stdout + stderr
    assert "interrupted after" in stderr and "--resume" in stderr
    assert json.loads(report.read_text())["executions"] < 100000
    assert (tmp_path / "traces" / "campaign.state").is_file()


def test_a_worker_that_dies_in_a_divided_directed_search_is_replaced_and_the_rounds_go_on(tmp_path: Path) -> None:
    """hybrid's workers wait for each other at every round: a dead one must not hold the others up."""
    report = tmp_path / "report.json"
    found = run_cli(
        "check", target("crashes.py:crash_or_race"), "--workers", "2", "--keep-going", "--budget", "48",
        "--out", str(tmp_path / "traces"), "--json", str(report),
    )
    assert found.returncode == 1, output(found)
    data = json.loads(report.read_text())
    assert data["strategy"] == "hybrid" and data["executions"] == 48
    assert "crash" in {bug["kind"] for bug in data["bugs"]}
    assert data["search"]["merged_rounds"] >= 2


def test_the_python_api_contained_reports_a_crash_and_its_caller_lives_on(tmp_path: Path) -> None:
    from dnsse.campaign.config import CampaignConfig
    from dnsse.campaign.run import run_campaign

    config = CampaignConfig(
        target=target("crashes.py:segfault"), strategy="random", budget=40, out=tmp_path, contained=True
    )
    result = run_campaign(config)  # in this pytest process: a segfault of the program would end it
    [found] = result.bugs
    assert found.bug.kind == "crash" and "killed by SIGSEGV" in found.bug.message
    replayed = run_cli("replay", str(found.trace_path))
    assert replayed.returncode == 1 and "reproduced" in replayed.stdout, output(replayed)
