"""dnsse beside the Python peers (frontrun, interleave-test, ploom) on classic plain-threads bugs.

Each peer runs in a subprocess under its own Python (see ``setup_peers.sh``)
through ``peer_driver.py``; dnsse runs in this process. Numbers are the
tool's own count of executions (schedules) to the first failure and its
executions per second over that search. A peer that is not installed, or
cannot express a program, is reported with the reason, never with a number.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.catalog import PEER_PROGRAMS, PeerProgram
from dnsse.campaign.config import CampaignConfig
from dnsse.campaign.run import run_campaign
from dnsse.search.registry import BUILT

DRIVER = Path(__file__).parent / "peer_driver.py"
PEERS_DIR = Path(os.environ.get("DNSSE_PEERS_DIR", Path.home() / ".cache" / "dnsse-peers"))


def _tools() -> list[tuple[str, str, list[str] | str]]:
    """(tool, strategy, command prefix or the reason it cannot run)."""
    frontrun = Path(sys.executable).parent / "frontrun"
    py312, py313 = PEERS_DIR / "py312" / "bin" / "python", PEERS_DIR / "py313" / "bin" / "python"
    missing = "not installed: run benchmarks/setup_peers.sh"
    tools: list[tuple[str, str, list[str] | str]] = []
    for strategy in ("dpor", "random"):
        # frontrun's explore() refuses to run outside its CLI wrapper (it preloads an I/O library).
        tools.append(("frontrun", strategy, [str(frontrun), sys.executable] if frontrun.exists() else missing))
    for strategy in ("random", "pct", "dfs"):
        tools.append(("interleave-test", strategy, [str(py312)] if py312.exists() else missing))
    tools.append(("ploom", "dfs", [str(py313)] if py313.exists() else missing))
    return tools


def run_peers(budget: int, seconds: float) -> list[dict]:
    rows = []
    for program in PEER_PROGRAMS:
        for strategy in BUILT:
            rows.append(_dnsse_row(program, strategy, budget, seconds))
        for tool, strategy, command in _tools():
            rows.append(_peer_row(program, tool, strategy, command, budget, seconds))
    return rows


def _dnsse_row(program: PeerProgram, strategy: str, budget: int, seconds: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="dnsse-peers-") as out:
        result = run_campaign(
            CampaignConfig(
                target=f"{program.path}:main", framework="threads", strategy=strategy, budget=budget,
                time_budget=seconds, out=Path(out), minimize=False,
            )
        )
    found = bool(result.bugs)
    return {
        "program": program.name, "tool": "dnsse", "strategy": strategy, "found": found,
        "executions_to_bug": result.bugs[0].execution if found else None, "executions": result.executions,
        "elapsed_s": result.elapsed_s, "kind": result.bugs[0].bug.kind if found else None,
    }


def _peer_row(program: PeerProgram, tool: str, strategy: str, command: list[str] | str, budget: int, seconds: float) -> dict:
    row = {"program": program.name, "tool": tool, "strategy": strategy}
    if isinstance(command, str):
        return {**row, "unsupported": command}
    try:
        completed = subprocess.run(
            [*command, str(DRIVER), tool, strategy, str(program.path), str(budget), str(seconds)],
            capture_output=True, text=True, timeout=seconds + 60, check=False,
        )
    except subprocess.TimeoutExpired:
        return {**row, "found": False, "unsupported": f"the tool did not return within {seconds + 60:g}s"}
    lines = [line for line in completed.stdout.splitlines() if line.startswith("{")]
    if not lines:
        error = (completed.stderr.strip().splitlines() or ["no output"])[-1]
        return {**row, "unsupported": f"failed to run: {error}"}
    return {**row, **json.loads(lines[-1])}


def render_peers(rows: list[dict]) -> list[str]:
    lines = [
        "Executions to the first failure (the tool's own count of schedules) and executions per second over "
        "that search; `0/—` means not found within the budget.",
        "",
        "| program | tool | strategy | found | executions to bug | executions/s | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        if row.get("unsupported"):
            lines.append(f"| {row['program']} | {row['tool']} | {row['strategy']} | – | – | – | {row['unsupported']} |")
            continue
        rate = row["executions"] / row["elapsed_s"] if row.get("elapsed_s") else 0.0
        to_bug = row.get("executions_to_bug")
        lines.append(
            f"| {row['program']} | {row['tool']} | {row['strategy']} | {'yes' if row.get('found') else 'no'} "
            f"| {to_bug if to_bug is not None else '—'} | {rate:.0f} | {row.get('kind') or row.get('note') or ''} |"
        )
    return lines
