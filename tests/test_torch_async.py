"""Async collectives progress as their own steps; touching buffers before wait() is caught."""

from __future__ import annotations

from helpers import run_torch

from dnsse.engine.bugs import BugKind


def test_modifying_an_async_all_reduce_buffer_before_wait_is_a_bug():
    for result in run_torch("torch_async.py:modifies_before_wait", seeds=range(30)):
        bug = result.bug
        assert bug is not None and bug.kind == BugKind.EXCEPTION
        assert bug.message.startswith("async all_reduce buffer modified before Work.wait() on rank ")
        assert "torch_async.py:22" in bug.message


def test_reading_an_async_output_before_wait_depends_on_the_schedule():
    results = run_torch("torch_async.py:reads_before_wait", seeds=range(50))
    failures = [r for r in results if r.bug is not None]
    assert failures, "no schedule wrote the result before the program read it"
    assert len(failures) < len(results), "every schedule wrote the result before the program read it"
    assert all(
        "AssertionError: read 2.0 before wait()" in r.bug.message
        or "AssertionError: read 1.0 before wait()" in r.bug.message
        for r in failures
    )


def test_async_transfers_are_separate_agents_that_step_between_issue_and_wait():
    (result,) = run_torch("torch_async.py:waits_properly", seeds=[0])
    assert "rank 0 all_reduce #1" in result.agent_names and "rank 1 all_reduce #1" in result.agent_names
    kinds = [operation.kind for _, operation in result.history]
    assert kinds.count("all_reduce.read") == 4 and kinds.count("all_reduce.write") == 4
    assert [e.fields["rank"] for e in result.events if e.name == "wait"].count(0) == 2


def test_async_collectives_compute_what_sync_ones_do_even_when_ranks_mix_both():
    for result in run_torch("torch_async.py:async_values", seeds=range(50)):
        assert result.bug is None, result.bug.render()
