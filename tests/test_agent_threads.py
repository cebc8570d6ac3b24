"""A torch rank's OS thread is kept for the next execution's rank, which must find it as a new thread.

dnsse.engine.agent_threads keeps rank threads from one execution to the
next: thread-locals and torch's group registry are cleared, and a thread
whose torch modes differ from a new thread's ends instead of being kept.
"""

from __future__ import annotations

import _thread

import pytest

from dnsse.engine import agent_threads, thread_state
from helpers import run_torch

pytestmark = [
    pytest.mark.torch,
    pytest.mark.skipif(not thread_state.available(), reason="per-thread state cannot be cleared here: threads are not kept"),
]


@pytest.mark.parametrize("program", ["leaves_locals", "leaves_grad_mode"])
def test_ranks_find_their_threads_as_new_ones_whatever_the_last_rank_left(program: str) -> None:
    results = run_torch(f"torch_thread_leftovers.py:{program}", world_size=3, seeds=range(12))
    assert [result.bug for result in results] == [None] * 12


def test_groups_made_by_every_execution_are_made_again_in_kept_threads() -> None:
    results = run_torch("torch_thread_leftovers.py:new_groups", world_size=4, seeds=range(12))
    assert [result.bug for result in results] == [None] * 12


def test_rank_threads_are_kept_and_other_agents_threads_are_not(monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[object] = []
    start_new_thread = agent_threads._start_new_thread

    def counted(function: object, arguments: tuple) -> int:
        started.append(function)
        return start_new_thread(function, arguments)

    monkeypatch.setattr(agent_threads, "_start_new_thread", counted)
    results = run_torch("torch_p2p.py:ordered_pair", world_size=2, seeds=range(8))
    assert [result.bug for result in results] == [None] * 8
    assert len(started) < 8, "16 rank threads, at most a few started: the others were kept ones"
    # Any other agent's thread is a new one, which ends with it.
    count = len(started)
    done = _thread.allocate_lock()
    done.acquire()
    agent_threads.start(done.release, keep=False)
    assert done.acquire(timeout=600)  # a safety net: the thread ends at once
    assert len(started) == count + 1 and started[-1] == done.release
