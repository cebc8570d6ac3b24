"""Delays around a collective: the first rank to reach it made last finds the reorder-buffer overflow."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import check_report

from dnsse.advisor.collectives import collective_delays
from dnsse.advisor.summary import RunSummary, Step

PROGRAM = Path(__file__).parent / "programs" / "advisor_collective.py"
SEEDS = (0, 1, 2)


def _barrier(agent: str, seq: int, line: int) -> Step:
    return Step(agent, "barrier", ((f"coll:WORLD#{seq}", "sync"),), f"app.py:{line}")


def test_the_first_and_the_last_rank_to_reach_a_collective_are_delayed_over_their_way_there() -> None:
    summary = RunSummary()
    summary.observe(
        [
            Step("rank 1", "send", (("p2p", "sync"),), "app.py:5"),
            _barrier("rank 1", 1, 9),
            Step("rank 0", "recv", (("p2p", "sync"),), "app.py:3"),
            Step("rank 1", "barrier.done", (), "app.py:9"),
            _barrier("rank 0", 1, 9),
            # After its arrival (and its .done), rank 1's way to the next barrier starts at line 11.
            Step("rank 1", "send", (("p2p", "sync"),), "app.py:11"),
            _barrier("rank 0", 2, 12),
            Step("rank 0 all_reduce #3", "all_reduce.read", (("coll:WORLD#3", "sync"),), None),
            _barrier("rank 1", 2, 12),
        ]
    )
    assert [(hint.describe(), hint.reason) for hint in collective_delays(summary)] == [
        ("delay rank 1's send at app.py:5", "collective: the other ranks reach WORLD#1 before rank 1"),
        ("delay rank 0's barrier at app.py:12", "collective: the other ranks reach WORLD#2 before rank 0"),
        ("delay rank 0's recv at app.py:3", "collective: rank 0, the last to reach WORLD#1, later still"),
        ("delay rank 1's send at app.py:11", "collective: rank 1, the last to reach WORLD#2, later still"),
    ]


def test_a_collective_one_rank_reached_alone_gives_no_hint() -> None:
    summary = RunSummary()
    summary.observe([_barrier("rank 0", 1, 9), Step("rank 0", "recv", (("p2p", "sync"),), "app.py:3")])
    assert collective_delays(summary) == []


def _check(tmp_path: Path, entry: str, strategy: str, seed: int, budget: int = 300) -> tuple[int, dict]:
    return check_report(tmp_path, f"{PROGRAM}:{entry}", strategy, seed, budget, "--world-size", "3")


@pytest.mark.slow
@pytest.mark.torch
def test_the_first_rank_to_reach_the_barrier_made_last_overflows_the_buffer(tmp_path: Path) -> None:
    for seed in SEEDS:
        code, guided = _check(tmp_path, "main", "llm", seed)
        assert code == 1 and "shards arrived before their count" in guided["bugs"][0]["message"]
        offline = guided["advisor"]["offline"]
        assert offline["found_bugs"][0] == "collective: delay rank 1's start", offline
        # Random's executions do not depend on its budget: stopping it just past ten times the guided count
        # decides the comparison as its whole budget would, without running the rest.
        code, unguided = _check(tmp_path, "main", "random", seed, budget=10 * guided["executions"] + 1)
        assert unguided["executions"] > 10 * guided["executions"], seed


@pytest.mark.slow
@pytest.mark.torch
def test_a_buffer_for_every_shard_survives_the_delays(tmp_path: Path) -> None:
    # The verdict is true: dfs runs every schedule and every message match of the program.
    code, exhaustive = _check(tmp_path, "large_buffer", "dfs", 0, budget=3000)
    assert code == 0 and exhaustive["verified"] is not None
    code, report = _check(tmp_path, "large_buffer", "llm", 0, budget=40)
    assert code == 0 and report["bugs"] == [] and report["executions"] == 40
