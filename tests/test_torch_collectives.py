"""Collectives under control compute what gloo computes, and mismatches are found."""

from __future__ import annotations

import sys

import pytest
from helpers import PROGRAMS, gloo_processes, run_torch

from dnsse.engine.bugs import BugKind

pytestmark = pytest.mark.torch


def test_every_collective_computes_the_values_worked_out_by_hand():
    for result in run_torch("torch_values.py:checked", seeds=range(50)):
        assert result.bug is None, result.bug.render()


@pytest.mark.slow
@pytest.mark.gloo
def test_real_gloo_computes_the_same_values():
    sys.path.insert(0, str(PROGRAMS))
    import torch_values

    outcomes = gloo_processes(2, torch_values.run_under_gloo, lambda rank, store: (rank, 2, store), 600)
    if any(isinstance(outcome, str) for outcome in outcomes.values()):
        pytest.skip(f"gloo could not start: {outcomes}")
    for rank in range(2):
        assert outcomes[rank] == torch_values.expected(rank, 2)


def test_correct_program_shows_no_bug_over_100_schedules():
    for result in run_torch("torch_async.py:waits_properly", seeds=range(100)):
        assert result.bug is None, result.bug.render()


def test_shape_mismatch_names_both_ranks_shapes_and_call_sites():
    for result in run_torch("torch_mismatch.py:shape_mismatch", seeds=range(20)):
        bug = result.bug
        assert bug is not None and bug.kind == BugKind.COLLECTIVE_MISMATCH
        assert "rank 0" in bug.message and "rank 1" in bug.message
        assert "float32[3]" in bug.message and "float32[5]" in bug.message
        assert all("torch_mismatch.py:10" in line for line in bug.details)


def test_different_ops_at_one_position_are_a_mismatch():
    for result in run_torch("torch_mismatch.py:op_mismatch", seeds=range(20)):
        bug = result.bug
        assert bug is not None and bug.kind == BugKind.COLLECTIVE_MISMATCH
        assert "broadcast(float32[2], src=0) on rank 1" in bug.message
        assert "all_reduce(float32[2], op=SUM) on rank 0" in bug.message


def test_rank_that_finishes_while_another_waits_in_a_collective_is_a_mismatch():
    for result in run_torch("torch_mismatch.py:skips_last", seeds=range(20)):
        bug = result.bug
        assert bug is not None and bug.kind == BugKind.COLLECTIVE_MISMATCH, bug
        assert bug.message == "rank 1 issued 1 collectives on WORLD and finished, but rank 0 waits in #2 all_reduce"
        assert any("torch_mismatch.py:25" in line for line in bug.details)


def test_collective_left_unjoined_at_the_end_of_a_run_is_a_mismatch():
    for result in run_torch("torch_mismatch.py:skips_last_async", seeds=range(20)):
        bug = result.bug
        assert bug is not None and bug.kind == BugKind.COLLECTIVE_MISMATCH, bug
        assert "rank 1 issued 1 collectives on WORLD, rank 0 issued 2" in bug.message


def test_subgroup_collectives_involve_only_their_members():
    for result in run_torch("torch_groups.py:subgroups", world_size=4, seeds=range(30)):
        assert result.bug is None, result.bug.render()


def test_init_process_group_with_any_backend_and_init_method_runs_unchanged():
    for result in run_torch("torch_groups.py:with_init", seeds=range(20)):
        assert result.bug is None, result.bug.render()


def test_collective_events_are_emitted_for_every_rank():
    (result,) = run_torch("torch_mismatch.py:skips_last", seeds=[0])
    issued = [(e.fields["rank"], e.fields["seq"]) for e in result.events if e.name == "collective.issue"]
    done = [(e.fields["rank"], e.fields["seq"]) for e in result.events if e.name == "collective.done"]
    assert sorted(issued) == [(0, 1), (0, 2), (1, 1)]
    assert sorted(done) == [(0, 1), (1, 1)]
