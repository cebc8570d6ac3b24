"""Point-to-point under control: rendezvous sends, FIFO channels, any-source races."""

from __future__ import annotations

import pytest
from helpers import run_torch

from dnsse.engine.bugs import BugKind

pytestmark = pytest.mark.torch


def test_two_ranks_that_both_send_first_deadlock_and_the_report_says_so():
    for result in run_torch("torch_p2p.py:send_send", seeds=range(20)):
        bug = result.bug
        assert bug is not None and bug.kind == BugKind.DEADLOCK
        assert "rank 0 waits for send(dst=1, tag=0) on rank 0 to be received" in bug.details[0]
        assert "rank 1 waits for send(dst=0, tag=0) on rank 1 to be received" in bug.details[1]


def test_any_source_receive_order_is_a_choice_some_schedules_get_wrong():
    results = run_torch("torch_p2p.py:any_source", world_size=3, seeds=range(50))
    failing = [r for r in results if r.bug is not None]
    assert failing and len(failing) < len(results)
    assert all("got rank 2's" in r.bug.message for r in failing)


def test_messages_on_one_channel_arrive_in_send_order():
    for result in run_torch("torch_p2p.py:ordered_pair", seeds=range(30)):
        assert result.bug is None, result.bug.render()


def test_batch_isend_irecv_ring_delivers_the_left_neighbours_value():
    for world_size in (2, 3):
        for result in run_torch("torch_p2p.py:batched_ring", world_size=world_size, seeds=range(30)):
            assert result.bug is None, result.bug.render()


def test_object_lists_travel_by_copy():
    for result in run_torch("torch_p2p.py:objects", seeds=range(10)):
        assert result.bug is None, result.bug.render()


def test_receive_buffer_of_the_wrong_size_is_reported_with_both_call_sites():
    (result,) = run_torch("torch_p2p.py:wrong_size", seeds=[0])
    assert result.bug is not None and result.bug.kind == BugKind.EXCEPTION
    assert result.bug.message == "recv on rank 1 posted float32[2] but rank 0 sent float32[3] (tag 0)"
    assert any("torch_p2p.py:65" in line for line in result.bug.details)


def test_writing_an_irecv_buffer_before_wait_is_a_bug():
    (result,) = run_torch("torch_p2p.py:irecv_modified", seeds=[0])
    assert result.bug is not None
    assert result.bug.message.startswith("async irecv buffer modified before Work.wait() on rank 1")
