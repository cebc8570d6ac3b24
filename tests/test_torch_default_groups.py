"""Each rank's default group is made once per campaign and handed to every execution (DefaultGroups)."""

from __future__ import annotations

import pytest
from helpers import SeededChooser, load_program

from dnsse.engine.determinism import Expected
from dnsse.engine.choices import ReplayChooser
from dnsse.engine.runner import run_execution

pytest.importorskip("torch", reason="torch is not installed for this Python (it is an optional dependency)")
from dnsse.frameworks.torch_dist.framework import TorchFramework  # noqa: E402 - imports torch


def _runs(spec: str, seeds: range) -> tuple[list, list]:
    """Each seed's run, and a strict replay of each run's choices, all in one campaign's framework."""
    target = load_program(spec)
    framework = TorchFramework(2)
    with framework.activate():
        runs = [run_execution(target, framework, SeededChooser(seed)) for seed in seeds]
        replays = [
            run_execution(target, framework, ReplayChooser(run.choices), expected=Expected(run.choices)) for run in runs
        ]
    return runs, replays


def test_a_group_one_rank_destroyed_does_not_reach_the_next_execution() -> None:
    runs, replays = _runs("torch_default_groups.py:one_rank_destroys", range(8))
    for run, replay in zip(runs, replays):
        assert run.bug is None, run.bug.render()
        assert replay.divergence is None and replay.bug is None
        assert [c.chosen for c in replay.choices] == [c.chosen for c in run.choices]
    # Either rank may start first: the one that made the group anew and the one that kept it share it.
    assert {run.choices[1].chosen.agent for run in runs} == {"rank 0", "rank 1"}


def test_groups_an_execution_creates_are_its_own() -> None:
    runs, replays = _runs("torch_default_groups.py:new_group_each_time", range(6))
    assert all(result.bug is None for result in runs + replays), [r.bug.render() for r in runs + replays if r.bug]
