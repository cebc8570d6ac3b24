"""Async collectives progress as their own steps; touching buffers before wait() is caught."""

from __future__ import annotations

import pytest
from helpers import run_torch

from dnsse.engine.bugs import BugKind

pytestmark = pytest.mark.torch


def test_modifying_an_async_all_reduce_buffer_before_wait_is_a_bug():
    for result in run_torch("torch_async.py:modifies_before_wait", seeds=range(30)):
        bug = result.bug
        assert bug is not None and bug.kind == BugKind.EXCEPTION
        assert bug.message.startswith("async all_reduce buffer modified before Work.wait() on rank ")
        assert "torch_async.py:22" in bug.message


def test_reading_an_async_output_before_wait_is_a_bug_on_every_schedule():
    for result in run_torch("torch_async.py:reads_before_wait", seeds=range(30)):
        bug = result.bug
        assert bug is not None and bug.kind == BugKind.EXCEPTION
        assert bug.message.startswith("async all_reduce buffer read before Work.wait() on rank ")
        assert "at tests/programs/torch_async.py:31 (issued at tests/programs/torch_async.py:29)" in bug.message


def test_reading_an_irecv_buffer_before_wait_is_a_bug():
    (result,) = run_torch("torch_p2p.py:irecv_read_early", seeds=[0])
    assert result.bug is not None
    assert result.bug.message.startswith("async irecv buffer read before Work.wait() on rank 1 at ")


def test_torch_internals_reading_their_own_async_buffers_are_not_flagged():
    for result in run_torch("torch_async.py:waits_properly", seeds=range(10)):
        assert result.bug is None, result.bug.render()


def test_async_transfers_are_separate_agents_that_step_between_issue_and_wait():
    (result,) = run_torch("torch_async.py:waits_properly", seeds=[0])
    assert "rank 0 all_reduce #1" in result.agent_names and "rank 1 all_reduce #1" in result.agent_names
    kinds = [operation.kind for _, operation in result.history]
    assert kinds.count("all_reduce.read") == 4 and kinds.count("all_reduce.write") == 4
    assert [e.fields["rank"] for e in result.events if e.name == "wait"].count(0) == 2


def test_async_collectives_compute_what_sync_ones_do_even_when_ranks_mix_both():
    for result in run_torch("torch_async.py:async_values", seeds=range(50)):
        assert result.bug is None, result.bug.render()
