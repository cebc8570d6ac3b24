"""torch inside asyncio tasks and threads a rank starts: the rank's process group, its thread's torch state."""

from __future__ import annotations

import pytest

from pathlib import Path

from helpers import PROGRAMS, run_torch

from dnsse.cli import main
from dnsse.engine.bugs import BugKind
from dnsse.engine.limits import Limits

pytestmark = pytest.mark.torch


def test_a_collective_issued_by_an_asyncio_task_reaches_the_ranks_group() -> None:
    for result in run_torch("torch_asyncio_rank.py:collective_in_task", seeds=range(10)):
        assert result.bug is None, result.bug.render()


def test_tasks_see_their_loop_threads_grad_mode_and_autocast_and_threads_start_with_torch_defaults() -> None:
    # What plain Python does: a task runs in its loop's thread, a new thread starts with grad enabled.
    for result in run_torch("torch_asyncio_rank.py:torch_state_in_tasks_and_threads", seeds=range(10)):
        assert result.bug is None, result.bug.render()


@pytest.mark.slow
def test_tasks_issuing_collectives_in_a_rank_dependent_order_are_a_mismatch_the_cli_finds(tmp_path: Path, capsys) -> None:
    target = f"{PROGRAMS}/torch_asyncio_rank.py:collectives_from_tasks_in_rank_order"
    assert main(["check", target, "--budget", "20", "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "collective_mismatch" in out and "all_reduce(float32[1], op=SUM) on rank 0" in out
    assert main(["replay", str(tmp_path / "bug-1.json")]) == 1
    # Without a pause, each rank's timers fire in the order of their delays, so the ranks disagree in every
    # schedule; under a pause (the default --max-delay) a rank stalled between starting its two tasks may agree.
    results = run_torch(
        "torch_asyncio_rank.py:collectives_from_tasks_in_rank_order", seeds=range(5), limits=Limits(max_delay=0.0)
    )
    assert all(r.bug is not None and r.bug.kind == BugKind.COLLECTIVE_MISMATCH for r in results)
