"""Ctrl-C and SIGTERM end a campaign cleanly, and --resume continues it as if it had not stopped."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile_cli import output, run_cli, target

RACY = target("slow.py:racy")
CAMPAIGN = ["--input", "rounds=30", "--strategy", "random", "--keep-going", "--budget", "60"]


def _started(out: Path, report: Path) -> subprocess.Popen:
    """The campaign, started and past its first executions."""
    process = subprocess.Popen(
        [sys.executable, "-m", "dnsse.cli", "check", RACY, *CAMPAIGN, "--out", str(out), "--json", str(report)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert process.stdout is not None
    assert "dnsse: checking" in process.stdout.readline()
    time.sleep(2.0)
    return process


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_after_the_current_execution_with_the_report_written(
    signum: int, status: int, tmp_path: Path
) -> None:
    out, report = tmp_path / "traces", tmp_path / "report.json"
    process = _started(out, report)
    process.send_signal(signum)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == status, stdout + stderr
    assert "interrupted after" in stderr and "--resume" in stderr
    data = json.loads(report.read_text())
    assert 0 < data["executions"] < 60
    assert (out / "campaign.state").exists()
    assert not [path for path in out.iterdir() if path.name.startswith(".partial-")]


def test_a_resumed_campaign_finds_what_the_uninterrupted_one_finds(tmp_path: Path) -> None:
    whole = run_cli("check", RACY, *CAMPAIGN, "--out", str(tmp_path / "a"), "--json", str(tmp_path / "a.json"))
    assert whole.returncode == 1, output(whole)
    out, report = tmp_path / "b", tmp_path / "b.json"
    process = _started(out, report)
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=60)
    assert process.returncode == 130
    resumed = run_cli("check", RACY, *CAMPAIGN, "--resume", str(out), "--json", str(report))
    assert resumed.returncode == 1, output(resumed)
    expected, got = json.loads((tmp_path / "a.json").read_text()), json.loads(report.read_text())
    assert got["executions"] == expected["executions"] == 60
    assert [(b["execution"], b["message"]) for b in got["bugs"]] == [
        (b["execution"], b["message"]) for b in expected["bugs"]
    ]
    assert not (out / "campaign.state").exists()


def test_sigkill_leaves_no_partial_file_that_looks_like_a_trace(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    process = _started(out, tmp_path / "report.json")
    process.kill()
    process.communicate(timeout=60)
    for trace in out.glob("bug-*.json"):
        assert json.loads(trace.read_text())["format"] == "dnsse-trace"


def test_resume_of_a_directory_without_a_saved_campaign_is_bad_input(tmp_path: Path) -> None:
    result = run_cli("check", RACY, "--resume", str(tmp_path))
    assert result.returncode == 2, output(result)
    assert "no saved campaign there" in result.stderr


def test_resume_of_another_campaign_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    process = _started(out, tmp_path / "report.json")
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=60)
    result = run_cli("check", RACY, *CAMPAIGN, "--seed", "9", "--resume", str(out))
    assert result.returncode == 2, output(result)
    assert "the saved campaign is another one: it was saved by a campaign with seed 0, not 9" in result.stderr
