"""Deadlock reports name what every rank waits for."""

from __future__ import annotations

import pytest
from helpers import run_torch

from dnsse.engine.bugs import BugKind

pytestmark = pytest.mark.torch


def _details(spec: str) -> list[str]:
    results = run_torch(spec, seeds=range(10))
    assert all(r.bug is not None and r.bug.kind == BugKind.DEADLOCK for r in results)
    return results[0].bug.details


def test_rank_in_a_collective_and_rank_in_a_recv():
    details = _details("torch_deadlocks.py:collective_vs_recv")
    assert details[0].startswith("rank 0 waits for all_reduce #1 of WORLD (waiting for ranks 1)")
    assert details[1].startswith("rank 1 waits for recv(src=0, tag=0) on rank 1")


def test_wait_on_an_isend_nobody_receives():
    details = _details("torch_deadlocks.py:unsent_isend_wait")
    assert details[0].startswith("rank 0 waits for Work.wait() of isend to 1 (tag 7) on rank 0")
    assert details[1].startswith("rank 1 waits for barrier #1 of WORLD (waiting for ranks 0)")


def test_collectives_issued_on_two_groups_in_opposite_orders():
    details = _details("torch_deadlocks.py:crossed_groups")
    assert details[0].startswith("rank 0 waits for all_reduce #1 of group g1 (ranks 0, 1) (waiting for ranks 1)")
    assert details[1].startswith("rank 1 waits for all_reduce #1 of WORLD (waiting for ranks 0)")
