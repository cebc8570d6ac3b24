"""--resume continues every strategy where it stopped: the resumed campaign finds what the uninterrupted one finds.

The campaign is interrupted once its saved state counts a few executions
(whenever that is: nothing here depends on timing), then resumed with the
same command. Bugs, executions, and the per-engine counts of coverage-guided
strategies must equal those of the same campaign run without a stop.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hostile_cli import output, run_cli, target

RACY = [target("slow.py:racy"), "--input", "rounds=30", "--keep-going", "--budget", "40"]
LOCKED = [target("slow.py:locked"), "--input", "workers=2", "--input", "rounds=4", "--budget", "5000"]
# How long to wait for a campaign to save its first executions before giving up (a hang, not a measure).
PATIENCE_S = 300


def _interrupted(arguments: list[str], out: Path, report: Path, after: int) -> None:
    """Run the campaign until its saved state counts ``after`` executions, then Ctrl-C it."""
    process = subprocess.Popen(
        [sys.executable, "-m", "dnsse.cli", "check", *arguments, "--out", str(out), "--json", str(report)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    state = out / "campaign.state"
    waited = 0.0
    while waited < PATIENCE_S and process.poll() is None:
        try:
            if json.loads(state.read_text())["executions"] >= after:
                break
        except (OSError, ValueError):
            pass  # not written yet
        time.sleep(0.05)
        waited += 0.05
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=PATIENCE_S)
    assert process.returncode == 130, stdout + stderr
    assert json.loads(state.read_text())["executions"] >= after


def _outcome(report: Path) -> tuple:
    data = json.loads(report.read_text())
    bugs = [(bug["execution"], bug["kind"], bug["message"]) for bug in data["bugs"]]
    return data["executions"], bugs, data.get("engines"), data.get("verified")


@pytest.mark.parametrize(
    ("strategy", "arguments"), [("hybrid", RACY), ("fuzz", RACY), ("symbolic", RACY), ("dfs", LOCKED)]
)
def test_a_resumed_campaign_finds_what_the_uninterrupted_one_finds(
    strategy: str, arguments: list[str], tmp_path: Path
) -> None:
    campaign = [*arguments, "--strategy", strategy]
    whole = run_cli("check", *campaign, "--out", str(tmp_path / "a"), "--json", str(tmp_path / "a.json"))
    assert whole.returncode in (0, 1), output(whole)
    out, report = tmp_path / "b", tmp_path / "b.json"
    _interrupted(campaign, out, report, after=5)
    resumed = run_cli("check", *campaign, "--resume", str(out), "--json", str(report))
    assert resumed.returncode == whole.returncode, output(resumed)
    assert _outcome(report) == _outcome(tmp_path / "a.json")
    assert not (out / "campaign.state").exists()


def test_a_resumed_dfs_search_still_verifies(tmp_path: Path) -> None:
    campaign = [*LOCKED, "--strategy", "dfs"]
    out, report = tmp_path / "traces", tmp_path / "report.json"
    _interrupted(campaign, out, report, after=5)
    resumed = run_cli("check", *campaign, "--resume", str(out), "--json", str(report))
    assert resumed.returncode == 0, output(resumed)
    data = json.loads(report.read_text())
    assert data["verified"] is not None and data["verified"]["executions"] == data["executions"]
    assert "verified (no bound" in resumed.stdout


def test_a_damaged_learnt_state_is_bad_input(tmp_path: Path) -> None:
    campaign = [*RACY, "--strategy", "hybrid"]
    out = tmp_path / "traces"
    _interrupted(campaign, out, tmp_path / "report.json", after=2)
    state = json.loads((out / "campaign.state").read_text())
    state["strategy_state"]["corpus"] = [{"choices": "none"}]
    (out / "campaign.state").write_text(json.dumps(state))
    resumed = run_cli("check", *campaign, "--resume", str(out))
    assert resumed.returncode == 2, output(resumed)
    assert "what the hybrid strategy learnt is damaged" in resumed.stderr
