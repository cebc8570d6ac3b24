"""One seed, one campaign: the advisor chooses the same hints, in the same order, in every run.

Each campaign runs twice, in two processes (the address of ``None``, and so
its hash, differs between them: a ranking that fell back on the order of a
set of steps with no location changed from run to run). Both must run the
same number of executions, try the same hints in the same order, and find
the same bug by the same schedule.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dnsse.advisor.summary import RunSummary, Step

PROGRAMS = Path(__file__).parent / "programs"


def _campaign(tmp_path: Path, target: str, strategy: str, budget: int, run: int) -> dict:
    out = tmp_path / f"out-{run}"
    report = tmp_path / f"report-{run}.json"
    result = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", f"{PROGRAMS}/{target}", "--strategy", strategy, "--seed", "1",
         "--budget", str(budget), "--no-minimize", "--out", str(out), "--json", str(report)],
        capture_output=True, text=True, timeout=600,
    )
    assert result.returncode in (0, 1), result.stdout + result.stderr
    found = json.loads(report.read_text())
    offline = found["advisor"]["offline"]
    return {
        "executions": found["executions"],
        "hints": offline["first_tried"],
        "tried": offline["tried"],
        "proposed": offline["received"],
        "found_by": offline["found_bugs"],
        "bugs": [(bug["kind"], bug["message"], json.loads(Path(bug["trace"]).read_text())["choices"]) for bug in found["bugs"]],
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    "target, strategy, budget, bug",
    [
        ("advisor_starve.py:main", "llm", 300, True),
        ("advisor_starve.py:main", "hybrid", 300, True),
        ("advisor_starve.py:drop_stale", "hybrid", 30, False),
        ("advisor_fault.py:checkpoint_every_push", "llm", 30, False),
        ("advisor_fault.py:main", "hybrid", 300, True),
        pytest.param("torch_p2p.py:ordered_pair", "llm", 30, False, marks=pytest.mark.torch),
        pytest.param("torch_p2p.py:ordered_pair", "hybrid", 30, False, marks=pytest.mark.torch),
    ],
)
def test_the_same_seed_tries_the_same_hints_and_finds_the_same_bug(
    tmp_path: Path, target: str, strategy: str, budget: int, bug: bool
) -> None:
    first = _campaign(tmp_path, target, strategy, budget, 1)
    second = _campaign(tmp_path, target, strategy, budget, 2)
    assert first == second
    assert bool(first["bugs"]) == bug
    if strategy == "llm":
        assert first["hints"]


def test_the_races_of_steps_without_a_location_rank_by_first_sight() -> None:
    # Seen equally often, the races keep the order the run showed them in (not the order of their hashes).
    steps = [Step(f"a{n}", "attr.store", ((f"o{n}", "write"),), None) for n in range(12)]
    steps += [Step(f"b{n}", "attr.load", ((f"o{n}", "read"),), None) for n in range(12)]
    summary = RunSummary()
    summary.observe(steps)
    assert [order.obj for order in summary.races()] == [f"o{n}" for n in range(12)]
