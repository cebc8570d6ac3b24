"""A worker's report of an execution reads back as the execution it ran: its choices, what each chose, its bug."""

from __future__ import annotations

import json
from pathlib import Path

from dnsse.engine.choices import Choice, ChoiceKind, Chosen
from dnsse.engine.runner import ExecutionResult
from dnsse.campaign.campaign import Campaign
from dnsse.campaign.config import CampaignConfig
from dnsse.search.registry import make_strategy
from dnsse.campaign.worker_reports import execution_report, result_from_report

PROGRAMS = Path(__file__).parent / "programs"


def _through_a_pipe(report: dict) -> dict:
    return json.loads(json.dumps(report).encode())


def _chosen(choices: list[Choice]) -> list[tuple]:
    # Choice's equality leaves out what was chosen: compared here field by field.
    return [(c.kind, c.options, c.index, c.chosen) for c in choices]


def test_the_choices_of_real_executions_come_back_with_what_each_chose_and_the_bug(tmp_path: Path) -> None:
    config = CampaignConfig(target=f"{PROGRAMS / 'threads_lock_order.py'}:main", strategy="random", out=tmp_path)
    campaign = Campaign(config)
    strategy = make_strategy("random", 0, 3)
    bugs = 0
    with campaign.framework.activate():
        campaign.prepare()
        for index in range(30):
            result = campaign.execute(strategy.chooser_for(index))
            back = result_from_report(_through_a_pipe(execution_report(index, result)))
            assert _chosen(back.choices) == _chosen(result.choices)
            assert all(choice.chosen is not None for choice in back.choices)
            assert (back.bug.to_json() if back.bug else None) == (result.bug.to_json() if result.bug else None)
            assert (back.steps, back.divergence) == (result.steps, result.divergence)
            bugs += result.bug is not None
    assert bugs, "the lock-order deadlock was never hit: nothing of a bug's report was read back"


def test_a_choice_without_what_it_chose_comes_back_without_it() -> None:
    choices = [
        Choice(ChoiceKind.SEED, 2**31, 7),
        Choice(ChoiceKind.AGENT, 3, 2, Chosen("rank 1", "all_reduce", "program.py:9")),
        Choice(ChoiceKind.INPUT, 2**64 - 1, 2**64 - 2, Chosen("main", "input n")),
    ]
    result = ExecutionResult(bug=None, choices=choices, inputs={"n": 3}, steps=5, elapsed_s=0.01)
    back = result_from_report(_through_a_pipe(execution_report(4, result)))
    assert _chosen(back.choices) == _chosen(choices)
    assert back.choices[0].chosen is None and back.inputs == {"n": 3}
