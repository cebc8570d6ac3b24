"""``dnsse.emit`` is a scheduling point: every order of two ranks' events is explored."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parent / "programs"
SAVE_AND_LOAD = f"{PROGRAMS / 'spec_events.py'}:save_and_load"
SPEC = "G(save_begin -> (!load U save_end))"
# Its ranks are torch ranks.
pytestmark = pytest.mark.torch


def run_cli(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dnsse.cli", *arguments], capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["dfs", "random", "pct"])
def test_a_load_between_another_ranks_save_events_is_found_and_replays(tmp_path: Path, strategy: str) -> None:
    found = run_cli(
        "check", SAVE_AND_LOAD, "--strategy", strategy, "--budget", "300",
        "--out", str(tmp_path), "--json", str(tmp_path / "report.json"),
    )
    assert found.returncode == 1, found.stdout + found.stderr
    assert f"{SPEC} is violated" in found.stdout
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["bugs"][0]["kind"] == "spec_violation"
    if strategy == "dfs":
        # dfs needs few executions to reach the violating order.
        assert report["bugs"][0]["execution"] <= 3
    trace = report["bugs"][0]["trace"]
    replayed = run_cli("replay", trace)
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "reproduced:" in replayed.stdout
    # The violating order itself: rank 1's load comes after rank 0's save_begin and before its save_end.
    lines = replayed.stdout.splitlines()
    begin = next(i for i, line in enumerate(lines) if "save_begin(rank=0)" in line)
    load = next(i for i, line in enumerate(lines) if "load(rank=1)" in line)
    assert begin < load
