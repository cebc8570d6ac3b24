"""A plain ``dist.all_reduce`` skips torch's API (``direct_calls``): every execution stays the same.

Each program runs under the same seeds with the direct path and with
torch's own path (the direct table emptied); the schedules, steps, bugs
and values must not differ, and the direct path must have been taken.
"""

from __future__ import annotations

import pytest
from helpers import run_torch

pytestmark = pytest.mark.torch
direct_calls = pytest.importorskip("dnsse.frameworks.torch_dist.direct_calls", reason="torch is not installed")
from dnsse.frameworks.torch_dist import rank_mode  # noqa: E402

PROGRAMS = [
    ("torch_mismatch.py:shape_mismatch", 2),
    ("torch_mismatch.py:op_mismatch", 2),
    ("torch_mismatch.py:skips_last", 2),
    ("torch_mismatch.py:skips_last_async", 2),
    ("torch_async.py:modifies_before_wait", 2),
    ("torch_async.py:reads_before_wait", 2),
    ("torch_deadlocks.py:collective_vs_recv", 2),
    ("torch_values.py:checked", 3),
    ("torch_p2p.py:blocking_then_async_all_reduce", 2),
]


def _record(spec: str, world_size: int) -> list[tuple]:
    return [
        (
            [choice.to_json() for choice in result.choices],
            result.steps,
            None if result.bug is None else (result.bug.kind, result.bug.message, result.bug.details),
        )
        for result in run_torch(spec, world_size, seeds=range(8))
    ]


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each direct call's outcome: "issued" (or ended by a bug it found), or "declined" (torch's path ran)."""
    outcomes: list[str] = []

    def counted(*args: object, **kwargs: object) -> object:
        outcomes.append("issued")
        done = direct_calls.direct_all_reduce(*args, **kwargs)
        if done is NotImplemented:
            outcomes[-1] = "declined"
        return done

    monkeypatch.setattr(rank_mode, "DIRECT", {key: counted for key in direct_calls.DIRECT})
    return outcomes


@pytest.mark.parametrize(("spec", "world_size"), PROGRAMS)
def test_the_direct_path_changes_no_execution(spec: str, world_size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    outcomes = _counting(monkeypatch)
    direct = _record(spec, world_size)
    monkeypatch.setattr(rank_mode, "DIRECT", {})
    through_torch = _record(spec, world_size)
    assert direct == through_torch
    assert outcomes, "no all_reduce reached the direct path"


def test_the_direct_path_is_taken_where_it_applies_only(monkeypatch: pytest.MonkeyPatch) -> None:
    outcomes = _counting(monkeypatch)
    (result,) = run_torch("torch_p2p.py:blocking_then_async_all_reduce", seeds=[0])
    assert result.bug is None and outcomes == ["issued"] * 4
    outcomes.clear()
    (result,) = run_torch("torch_p2p.py:all_reduce_with_a_bad_op", seeds=[0])
    # A string is no ReduceOp: torch's path says what is wrong, as without dnsse.
    assert result.bug is not None and "TypeError" in result.bug.message and outcomes[0] == "declined"

