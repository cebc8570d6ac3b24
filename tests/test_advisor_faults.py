"""Fault hints: the offline advisor crashes an actor right after a change it did not persist."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import check_report

from dnsse.advisor.actor_calls import calls_in, state_changing_methods
from dnsse.advisor.hints import FaultHint, parse_hints
from dnsse.advisor.offline import OfflineAdvisor
from dnsse.advisor.summary import RunSummary, Step
from dnsse.engine.choices import ChoiceKind, Chosen
from dnsse.search.guided import GuidedChooser

PROGRAM = Path(__file__).parent / "programs" / "advisor_fault.py"
SEEDS = (0, 1, 2)


def _call(label: str, *kinds: str) -> list[Step]:
    return [Step(label, kind, (), None) for kind in ("actor.call", *kinds, "actor.call.end")]


def _one_run() -> list[Step]:
    return [
        *_call("ParameterServer#1.pull#2"),
        *_call("ParameterServer#1.push#3"),
        *_call("ParameterServer#1.push#5", "actor.submit", "ray.get"),
        *_call("ParameterServer#1.pull#7"),
    ]


def _summary() -> RunSummary:
    summary = RunSummary(state_changes=state_changing_methods(PROGRAM))
    summary.observe(_one_run(), fault_askers=["ParameterServer#1.pull#2", "ParameterServer#1.push#3"])
    return summary


def test_the_source_says_which_methods_change_the_actor_state() -> None:
    assert state_changing_methods(PROGRAM) == {"Checkpoints": {"save"}, "ParameterServer": {"push"}}


def test_a_call_that_submitted_work_persisted_and_one_that_did_not_did_not() -> None:
    persisted = {(call.method, call.nth): call.persisted for call in calls_in(_one_run())}
    assert persisted == {("pull", 1): False, ("push", 1): False, ("push", 2): True, ("pull", 2): False}


def test_the_advisor_proposes_a_crash_after_the_unpersisted_push_only() -> None:
    hints = [hint for hint in OfflineAdvisor().advise(_summary()) if isinstance(hint, FaultHint)]
    assert [hint.describe() for hint in hints] == ["crash ParameterServer#1 after its call #1 of push"]


def test_no_crash_is_proposed_for_an_actor_that_may_not_crash() -> None:
    summary = RunSummary(state_changes=state_changing_methods(PROGRAM))
    summary.observe(_one_run())
    assert not [hint for hint in OfflineAdvisor().advise(summary) if isinstance(hint, FaultHint)]


def test_fault_hints_from_a_model_are_validated() -> None:
    parsed = parse_hints(
        {
            "hints": [
                {"type": "fault", "actor": "ParameterServer#1", "method": "push", "after": 1, "confidence": 0.7},
                {"type": "fault", "actor": "Checkpoints#1", "method": "save", "after": 1},
                {"type": "fault", "actor": "ParameterServer#1", "method": "rm_rf", "after": 1},
                {"type": "fault", "actor": "ParameterServer#1", "method": "push", "after": 0},
                {"type": "fault", "actor": "ParameterServer#1", "method": "push", "after": True},
            ]
        },
        _summary(),
        "model",
    )
    assert parsed.hints == [FaultHint("ParameterServer#1", "push", 1, 0.7, "model")]
    assert len(parsed.discarded) == 4


def test_the_chooser_crashes_the_first_call_after_the_hinted_one_and_nothing_else() -> None:
    chooser = GuidedChooser(0, fault=FaultHint("ParameterServer#1", "push", 1, 0.9))

    def ask(agent: str) -> int:
        return chooser.next_value(ChoiceKind.FAULT, 2, lambda: Chosen(agent, ChoiceKind.FAULT))

    assert ask("ParameterServer#1.pull#2") == 0
    assert ask("ParameterServer#1.push#3") == 0  # before the push's body
    assert ask("ParameterServer#1.push#3") == 0  # after it: the call would run again, on the restored state
    assert ask("Other#1.push#4") == 0
    assert ask("ParameterServer#1.pull#5") == 1  # the push ended: its change is lost with the process
    assert ask("ParameterServer#1.push#6") == 0  # one crash per hint


def _check(tmp_path: Path, entry: str, strategy: str, seed: int, budget: int = 300) -> tuple[int, dict]:
    return check_report(tmp_path, f"{PROGRAM}:{entry}", strategy, seed, budget)


@pytest.mark.slow
def test_the_crash_hint_finds_the_lost_update_on_restart_sooner_than_random(tmp_path: Path) -> None:
    for seed in SEEDS:
        code, guided = _check(tmp_path, "main", "llm", seed)
        assert code == 1 and "lost update" in guided["bugs"][0]["message"]
        offline = guided["advisor"]["offline"]
        # The bug came from the crash hint, the first hint tried, after one random execution.
        assert offline["found_bugs"][0] == "crash: crash ParameterServer#1 after its call #1 of push"
        assert offline["tried"] == 1 and guided["executions"] == 2
        code, unguided = _check(tmp_path, "main", "random", seed)
        assert code == 1 and "lost update" in unguided["bugs"][0]["message"]
        assert unguided["executions"] > guided["executions"], seed


def test_an_actor_that_persists_every_change_survives_the_advisor(tmp_path: Path) -> None:
    # The verdict is true: dfs enumerates every schedule and every crash point of the program.
    code, exhaustive = _check(tmp_path, "checkpoint_every_push", "dfs", 0, budget=3000)
    assert code == 0 and exhaustive["verified"] is not None
    code, report = _check(tmp_path, "checkpoint_every_push", "llm", 0, budget=40)
    assert code == 0 and report["bugs"] == [] and report["executions"] == 40
