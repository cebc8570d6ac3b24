"""SCTBench's CS programs as ported: each bug is found and is the one SCTBench seeds; each fixed version passes.

Every search here stops at the first bug, with the strategy and seed that
finds it soonest in the quick benchmark run (``benchmarks/sctbench.py
--quick``). reorder_10, reorder_20 and twostage_100 need one thread run at one
exact point among 11 to 101: only the default ``hybrid`` finds them, with its
race-directed engine (BENCHMARKS.md).
"""

from __future__ import annotations

import runpy
import threading

import pytest

from benchmarks.sctbench import PORTS, Port, run_one

DEADLOCKS = {"carter01_bad", "deadlock01_bad", "phase01_bad", "sync01_bad", "sync02_bad"}
ONE_POINT_AMONG_MANY = {"reorder_10_bad", "reorder_20_bad", "twostage_100_bad"}
FASTEST = {"reorder_4_bad": "pos", "reorder_5_bad": "pos", "twostage_bad": "pct", "token_ring_bad": "pos"}
BAD = [p for p in PORTS if not p.correct and p.name not in ONE_POINT_AMONG_MANY]
CORRECT = [p for p in PORTS if p.correct]


@pytest.mark.slow
@pytest.mark.parametrize("port", BAD, ids=lambda p: p.name)
def test_the_seeded_bug_is_found(port: Port) -> None:
    campaign = run_one(port, FASTEST.get(port.name, "random"), seed=1, budget=300, time_budget=None)
    assert campaign.executions_to_bug is not None, f"{port.name}: no bug in {campaign.executions} executions"
    assert campaign.bug_kind == ("deadlock" if port.name in DEADLOCKS else "exception")


@pytest.mark.slow
@pytest.mark.parametrize("port", [p for p in PORTS if p.name in ONE_POINT_AMONG_MANY], ids=lambda p: p.name)
def test_the_default_strategy_finds_a_bug_at_one_point_among_many_threads_within_a_few_executions(port: Port) -> None:
    campaign = run_one(port, "hybrid", seed=1, budget=20, time_budget=None)
    assert campaign.executions_to_bug is not None and campaign.executions_to_bug <= 8, campaign
    assert campaign.bug_kind == "exception"


@pytest.mark.slow
@pytest.mark.parametrize("port", CORRECT, ids=lambda p: p.name)
def test_a_fixed_version_passes_every_execution(port: Port) -> None:
    campaign = run_one(port, "random", seed=1, budget=30, time_budget=None)
    assert campaign.executions == 30 and campaign.executions_to_bug is None


@pytest.mark.parametrize("port", CORRECT, ids=lambda p: p.name)
def test_a_fixed_version_runs_as_plain_python(port: Port) -> None:
    """Without dnsse, on real threads: the port is a working Python program."""
    before = set(threading.enumerate())
    namespace = runpy.run_path(port.target.rsplit(":", 1)[0])
    namespace[port.entry]()
    # Every thread it started has ended (threads of the test runner itself, as pytest-xdist's, are not its own).
    assert not [thread for thread in threading.enumerate() if thread not in before]
