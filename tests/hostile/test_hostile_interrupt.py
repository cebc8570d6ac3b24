"""Ctrl-C and SIGTERM end a campaign cleanly, and --resume continues it as if it had not stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hostile_cli import output, run_cli, target

RACY = target("slow.py:racy")
# How long a signalled campaign may take (a hang, not a measure).
PATIENCE_S = 600
CAMPAIGN = ["--input", "rounds=30", "--strategy", "random", "--keep-going", "--budget", "60"]


def _signalled(out: Path, report: Path, signal_name: str = "INT") -> subprocess.CompletedProcess:
    """The campaign, sent ``signal_name`` in its 5th execution by its own target (as ``kill -INT PID`` would
    send it to dnsse), so at the same point however loaded the machine is; run to its end."""
    env = {**os.environ, "INTERRUPT_AT": f"{out.parent / (out.name + '.runs')}:5", "INTERRUPT_WITH": signal_name}
    return subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", RACY, *CAMPAIGN, "--out", str(out), "--json", str(report)],
        capture_output=True, text=True, start_new_session=True, env=env, timeout=PATIENCE_S,
    )


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_after_the_current_execution_with_the_report_written(
    signum: int, status: int, tmp_path: Path
) -> None:
    out, report = tmp_path / "traces", tmp_path / "report.json"
    stopped = _signalled(out, report, signal.Signals(signum).name[3:])
    assert stopped.returncode == status, output(stopped)
    assert "interrupted after" in stopped.stderr and "--resume" in stopped.stderr
    data = json.loads(report.read_text())
    assert 0 < data["executions"] < 60
    assert (out / "campaign.state").exists()
    assert not [path for path in out.iterdir() if path.name.startswith(".partial-")]


def test_a_resumed_campaign_finds_what_the_uninterrupted_one_finds(tmp_path: Path) -> None:
    whole = run_cli("check", RACY, *CAMPAIGN, "--out", str(tmp_path / "a"), "--json", str(tmp_path / "a.json"))
    assert whole.returncode == 1, output(whole)
    out, report = tmp_path / "b", tmp_path / "b.json"
    assert _signalled(out, report).returncode == 130
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
    assert _signalled(out, tmp_path / "report.json", "KILL").returncode == -signal.SIGKILL
    for trace in out.glob("bug-*.json"):
        assert json.loads(trace.read_text())["format"] == "dnsse-trace"


def test_resume_of_a_directory_without_a_saved_campaign_is_bad_input(tmp_path: Path) -> None:
    result = run_cli("check", RACY, "--resume", str(tmp_path))
    assert result.returncode == 2, output(result)
    assert "no saved campaign there" in result.stderr


def test_resume_of_another_campaign_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "traces"
    assert _signalled(out, tmp_path / "report.json").returncode == 130
    result = run_cli("check", RACY, *CAMPAIGN, "--seed", "9", "--resume", str(out))
    assert result.returncode == 2, output(result)
    assert "the saved campaign is another one: it was saved by a campaign with seed 0, not 9" in result.stderr
