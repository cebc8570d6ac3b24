"""Delay hints: the holder of a contended lock, and a starved caller of an actor, each finding its bug first."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import check_report

from dnsse.advisor.delays import lock_holder_delays, starved_callers
from dnsse.advisor.hints import DelayHint, OperationRef, parse_hints
from dnsse.advisor.ledger import Ledger
from dnsse.advisor.summary import RunSummary, Step
from dnsse.engine.choices import Chosen
from dnsse.engine.operation import Operation
from dnsse.search.guided import GuidedChooser

PROGRAMS = Path(__file__).parent / "programs"
SEEDS = (0, 1, 2)


def _lock_run() -> RunSummary:
    summary = RunSummary()
    summary.observe(
        [
            Step("a", "lock.acquire", (("lock#1", "sync"),), "app.py:10"),
            Step("b", "attr.load", (("o.x", "read"),), "app.py:20"),
            Step("a", "attr.store", (("o.y", "write"),), "app.py:11"),
            Step("a", "lock.release", (("lock#1", "release"),), "app.py:10"),
            Step("b", "lock.acquire", (("lock#1", "sync"),), "app.py:21"),
            Step("b", "lock.acquire", (("lock#2", "sync"),), "app.py:22"),
            Step("b", "attr.store", (("o.z", "write"),), "app.py:23"),
        ]
    )
    return summary


def test_the_holder_of_a_lock_two_agents_take_is_delayed_right_after_taking_it() -> None:
    described = [hint.describe() for hint in lock_holder_delays(_lock_run())]
    # lock#2 is b's alone: holding b there delays nobody who wants it.
    assert described == ["delay a's attr.store at app.py:11", "delay b's lock.acquire at app.py:22"]


def test_a_caller_is_starved_where_it_calls_again_and_again_first() -> None:
    summary = RunSummary()
    summary.observe(
        [Step("w1", "actor.submit", (("actor:PS#1", "sync"),), "sgd.py:5")]
        + [Step("w1", "actor.submit", (("actor:PS#1", "sync"),), "sgd.py:7")] * 3
        + [Step("w2", "actor.submit", (("actor:PS#1", "sync"),), "sgd.py:7")] * 3
        + [Step("w3", "actor.submit", (("actor:Other#1", "sync"),), "sgd.py:9")]
    )
    described = [hint.describe() for hint in starved_callers(summary)]
    assert described == [
        "delay w1's actor.submit at sgd.py:7", "delay w2's actor.submit at sgd.py:7", "delay w1's actor.submit at sgd.py:5",
    ]


def test_delay_hints_from_a_model_are_validated() -> None:
    parsed = parse_hints(
        {
            "hints": [
                {"type": "delay", "at": {"agent": "a", "operation": "attr.store"}, "confidence": 0.5},
                {"type": "delay", "at": {"agent": "z"}},
                {"type": "delay", "at": "a"},
            ]
        },
        _lock_run(),
        "model",
    )
    assert parsed.hints == [DelayHint(OperationRef("a", "attr.store"), 0.5, "model")]
    assert len(parsed.discarded) == 2


def test_the_delayed_agent_runs_only_when_no_other_can() -> None:
    hint = DelayHint(OperationRef("a", "attr.store", "app.py:11"), 0.9)
    delayed, other = Chosen("a", "attr.store", "app.py:11"), Chosen("b", "attr.load", "app.py:20")
    operations = [Operation("attr.store", ()), Operation("attr.load", ())]
    for seed in range(20):
        chooser = GuidedChooser(seed, delay=hint)
        offered = [delayed, other]
        assert chooser.next_agent_seeing([0, 1], None, 0, operations, [], offered.__getitem__) == 1
        assert chooser.next_agent_seeing([0], None, 1, operations[:1], [], [delayed].__getitem__) == 0


def test_a_shape_not_tried_yet_goes_before_the_shapes_tried() -> None:
    ledger = Ledger()
    window = DelayHint(OperationRef("a"), 0.95, reason="window: x")
    starve = DelayHint(OperationRef("b"), 0.6, reason="starve: x")
    ledger.record(window, useful=True)
    assert ledger.priority(starve) > ledger.priority(window)


def _check(tmp_path: Path, target: str, strategy: str, seed: int, budget: int = 300) -> tuple[int, dict]:
    return check_report(tmp_path, f"{PROGRAMS}/{target}", strategy, seed, budget)


def _guided_beats_random(tmp_path: Path, target: str, shape: str, kind: str) -> None:
    for seed in SEEDS:
        code, guided = _check(tmp_path, target, "llm", seed)
        assert code == 1 and guided["bugs"][0]["kind"] == kind
        assert guided["advisor"]["offline"]["found_bugs"][0].startswith(f"{shape}: delay "), guided["advisor"]
        # Random's executions do not depend on its budget: stopping it just past the guided count decides
        # the comparison as its whole budget would, without running the rest.
        code, unguided = _check(tmp_path, target, "random", seed, budget=guided["executions"] + 1)
        assert unguided["executions"] > guided["executions"], seed


@pytest.mark.slow
def test_delaying_the_lock_holder_finds_the_lock_order_deadlock(tmp_path: Path) -> None:
    _guided_beats_random(tmp_path, "advisor_delays.py:lock_order", "holder", "deadlock")


@pytest.mark.slow
def test_starving_one_caller_finds_the_stale_gradient(tmp_path: Path) -> None:
    _guided_beats_random(tmp_path, "advisor_starve.py:main", "starve", "exception")


def test_the_correct_versions_stay_correct_under_the_delays(tmp_path: Path) -> None:
    # One lock order is deadlock-free in every schedule: dfs enumerates them all.
    code, exhaustive = _check(tmp_path, "advisor_delays.py:ordered_locks", "dfs", 0, budget=5000)
    assert code == 0 and exhaustive["verified"] is not None
    for target in ("advisor_delays.py:ordered_locks", "advisor_starve.py:drop_stale"):
        code, report = _check(tmp_path, target, "llm", 0, budget=40)
        assert code == 0 and report["executions"] == 40, target


@pytest.mark.slow
def test_a_hint_is_tried_again_under_another_input_and_then_finds_the_bug(tmp_path: Path) -> None:
    target = "advisor_delays.py:large_batches_evict_first"
    for seed in SEEDS:
        code, guided = _check(tmp_path, target, "llm", seed, budget=200)
        assert code == 1 and guided["bugs"][0]["kind"] == "deadlock"
        offline = guided["advisor"]["offline"]
        # Its first try drew another batch size; the retry took the end of the input's range.
        assert offline["found_bugs"][0].startswith("holder: delay Thread-1 (scheduler)'s cell.load"), offline
        assert offline["found_bugs"][0].endswith("(try 2, input batch = 8)") and offline["retried"] >= 1
        # Random's executions do not depend on its budget: stopping it just past the guided count decides
        # the comparison as its whole budget would, without running the rest.
        code, unguided = _check(tmp_path, target, "random", seed, budget=guided["executions"] + 1)
        assert unguided["executions"] > guided["executions"], seed
