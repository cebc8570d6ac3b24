"""The same seed gives the same campaign, before and after a change of how executions run.

A fixed set of campaigns (every strategy in this process, and the executors
that run executions elsewhere: worker processes striped, in rounds, a
divided dfs, contained) is run through the command line, and what each
found is compared with ``tests/golden/campaigns.json``: executions, bugs,
the choices of each bug's trace, what an exhausted search verified, and the
strategy's counts. A change that means to alter a search (a strategy that
explores differently) records the file again::

    DNSSE_RECORD_CAMPAIGNS=1 python -m pytest tests/test_same_campaigns.py

and says so in its commit; a change of the campaign machinery must not.
Campaigns in worker processes finish their executions in an order the
processes' speed decides, so theirs are compared by what does not depend on
it: the executions, and the bugs by kind and message with their hit counts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import PROGRAMS

GOLDEN = Path(__file__).parent / "golden" / "campaigns.json"
RECORD = os.environ.get("DNSSE_RECORD_CAMPAIGNS") == "1"

COUNTER = str(PROGRAMS / "threads_counter.py")
SEARCH = str(PROGRAMS / "search_threads.py")
DPOR = str(PROGRAMS / "dpor_threads.py")
LOCK_ORDER = str(PROGRAMS / "threads_lock_order.py")

# name -> (target, options); each keeps going to its budget, so that it shows more than one execution's worth.
CAMPAIGNS = {
    "random": (f"{COUNTER}:unlocked", ["--strategy", "random", "--budget", "30", "--keep-going"]),
    "pct": (f"{SEARCH}:order_violation", ["--strategy", "pct", "--budget", "30", "--keep-going"]),
    "pos": (f"{LOCK_ORDER}:main", ["--strategy", "pos", "--budget", "30", "--keep-going"]),
    "fuzz": (f"{COUNTER}:unlocked", ["--strategy", "fuzz", "--budget", "30", "--keep-going", "--seed", "3"]),
    "symbolic": (f"{SEARCH}:lost_update", ["--strategy", "symbolic", "--budget", "30", "--keep-going"]),
    "hybrid": (f"{COUNTER}:unlocked", ["--strategy", "hybrid", "--budget", "40", "--keep-going", "--seed", "1"]),
    "llm": (f"{SEARCH}:order_violation", ["--strategy", "llm", "--budget", "20", "--keep-going"]),
    "dfs-verified": (f"{DPOR}:lazy_init", ["--strategy", "dfs", "--budget", "200"]),
    "dfs-bug": (f"{COUNTER}:unlocked", ["--strategy", "dfs", "--budget", "200", "--keep-going"]),
    "ipb": (f"{SEARCH}:order_violation", ["--strategy", "ipb", "--budget", "100", "--keep-going"]),
    "coverage": (f"{COUNTER}:unlocked", ["--strategy", "random", "--budget", "10", "--coverage"]),
    "workers-random": (f"{COUNTER}:unlocked", ["--strategy", "random", "--budget", "24", "--keep-going", "--workers", "2"]),
    "workers-fuzz": (f"{COUNTER}:unlocked", ["--strategy", "fuzz", "--budget", "40", "--keep-going", "--workers", "2"]),
    "workers-dfs": (f"{DPOR}:lazy_init", ["--strategy", "dfs", "--budget", "200", "--workers", "2"]),
}
# As @dnsse.test runs it (no command-line option): executions in one worker process.
CONTAINED = {"target": f"{COUNTER}:unlocked", "strategy": "pct", "budget": 12, "keep_going": True}
# Run by several processes: compared by what their speed does not decide.
UNORDERED = {"workers-random", "workers-fuzz", "workers-dfs", "contained"}


def _campaign(name: str, tmp_path: Path) -> dict:
    if name == "contained":
        return _contained(tmp_path)
    target, options = CAMPAIGNS[name]
    report_file = tmp_path / "report.json"
    completed = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", target, *options, "--no-db", "--out", str(tmp_path / "out"),
         "--json", str(report_file)],
        capture_output=True, text=True, timeout=600,
    )
    assert completed.returncode in (0, 1), completed.stdout + completed.stderr
    return _what_it_found(json.loads(report_file.read_text()), unordered=name in UNORDERED)


def _contained(tmp_path: Path) -> dict:
    from dnsse.campaign.config import CampaignConfig
    from dnsse.campaign.run import run_campaign

    result = run_campaign(CampaignConfig(**CONTAINED, contained=True, out=tmp_path / "out"))
    bugs = sorted(
        ({"kind": found.bug.kind.value, "message": found.bug.message, "hits": found.hits} for found in result.bugs),
        key=lambda bug: (bug["kind"], bug["message"]),
    )
    return {"executions": result.executions, "bugs": bugs, "verified": result.verified}


def _what_it_found(report: dict, unordered: bool) -> dict:
    bugs = []
    for bug in report["bugs"]:
        seen: dict = {"kind": bug["kind"], "message": bug["message"], "hits": bug.get("hits", 1)}
        if not unordered:
            trace = json.loads(Path(bug["trace"]).read_text())
            # One line per choice, so that a difference reads as the step where the searches part.
            choices = [json.dumps(choice, sort_keys=True) for choice in trace["choices"]]
            seen.update(execution=bug["execution"], choices=choices, inputs=trace["inputs"])
        bugs.append(seen)
    if unordered:
        bugs.sort(key=lambda bug: (bug["kind"], bug["message"]))
    found = {
        "executions": report["executions"],
        "bugs": bugs,
        "verified": report.get("verified"),
        "unverified_reason": report.get("unverified_reason"),
        "inconclusive": len(report.get("inconclusive") or []),
        "rejected": report.get("rejected"),
    }
    if not unordered:
        found["search"] = report.get("search")
        found["engines"] = report.get("engines")
        coverage = report.get("coverage")
        found["coverage"] = (coverage or {}).get("percent")
    return found


@pytest.mark.parametrize("name", sorted([*CAMPAIGNS, "contained"]))
def test_the_same_seed_gives_the_same_campaign_as_recorded(name: str, tmp_path: Path) -> None:
    found = _campaign(name, tmp_path)
    recorded = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    if RECORD:
        recorded[name] = found
        GOLDEN.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
        return
    assert name in recorded, f"no recorded campaign {name}: run with DNSSE_RECORD_CAMPAIGNS=1"
    assert found == recorded[name]
