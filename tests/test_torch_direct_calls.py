"""Plain collectives skip torch's API (``direct_calls``): every execution stays the same.

Each program runs under the same seeds with the direct path and with
torch's own path (the direct table emptied); the schedules, steps, bugs
and values must not differ, and the direct path must have been taken.
"""

from __future__ import annotations

from typing import Callable

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
    ("torch_direct.py:overlapped", 2),
    ("torch_direct.py:overlapped", 3),
    ("torch_direct.py:gathered_before_wait", 2),
    ("torch_direct.py:root_disagrees", 2),
    ("torch_async.py:async_values", 2),
    ("torch_groups.py:subgroups", 4),
    ("torch_autograd.py:broadcast_into_parameter", 2),
]
# Programs whose every collective takes torch's path: they must run the same with the table there or not.
DECLINED = [("torch_direct.py:declined", 2), ("torch_direct.py:mixed_dtypes", 2), ("torch_direct.py:scatter_too_small", 2)]


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
    """Each direct call's outcome: "<op> issued" (or ended by a bug it found), or "<op> declined" (torch's path ran)."""
    outcomes: list[str] = []

    def counted(public: object, direct: Callable) -> Callable:
        def call(*args: object, **kwargs: object) -> object:
            name = public.__name__  # type: ignore[attr-defined]
            outcomes.append(f"{name} issued")
            done = direct(*args, **kwargs)
            if done is NotImplemented:
                outcomes[-1] = f"{name} declined"
            return done

        return call

    monkeypatch.setattr(rank_mode, "DIRECT", {key: counted(key, direct) for key, direct in direct_calls.DIRECT.items()})
    return outcomes


@pytest.mark.parametrize(("spec", "world_size"), PROGRAMS)
def test_the_direct_path_changes_no_execution(spec: str, world_size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    outcomes = _counting(monkeypatch)
    direct = _record(spec, world_size)
    monkeypatch.setattr(rank_mode, "DIRECT", {})
    through_torch = _record(spec, world_size)
    assert direct == through_torch
    assert any(outcome.endswith("issued") for outcome in outcomes), "no collective took the direct path"


@pytest.mark.parametrize(("spec", "world_size"), DECLINED)
def test_declined_calls_change_no_execution(spec: str, world_size: int, monkeypatch: pytest.MonkeyPatch) -> None:
    outcomes = _counting(monkeypatch)
    with_table = _record(spec, world_size)
    monkeypatch.setattr(rank_mode, "DIRECT", {})
    assert with_table == _record(spec, world_size)
    assert outcomes and not any(outcome.endswith("issued") for outcome in outcomes)


def test_the_direct_path_is_taken_where_it_applies_only(monkeypatch: pytest.MonkeyPatch) -> None:
    outcomes = _counting(monkeypatch)
    (result,) = run_torch("torch_p2p.py:blocking_then_async_all_reduce", seeds=[0])
    assert result.bug is None and outcomes == ["all_reduce issued"] * 4
    outcomes.clear()
    (result,) = run_torch("torch_p2p.py:all_reduce_with_a_bad_op", seeds=[0])
    # A string is no ReduceOp: torch's path says what is wrong, as without dnsse.
    assert result.bug is not None and "TypeError" in result.bug.message and outcomes[0] == "all_reduce declined"



def test_every_plain_collective_takes_the_direct_path_with_others_unsettled(monkeypatch: pytest.MonkeyPatch) -> None:
    outcomes = _counting(monkeypatch)
    (result,) = run_torch("torch_direct.py:overlapped", seeds=[0])
    assert result.bug is None
    # Per rank: five async ones, then five synchronous ones while those are unsettled (reduce_scatter_tensor
    # reaches dispatch as reduce_scatter_single).
    ops = ["all_reduce", "broadcast", "all_gather", "reduce", "reduce_scatter_single"]
    assert sorted(outcomes) == sorted(f"{op} issued" for op in ops * 4)


def test_calls_torch_must_check_or_convert_take_its_path(monkeypatch: pytest.MonkeyPatch) -> None:
    outcomes = _counting(monkeypatch)
    (result,) = run_torch("torch_direct.py:declined", seeds=[0])
    assert result.bug is None
    assert sorted(outcomes) == sorted(f"{op} declined" for op in ("all_reduce", "broadcast", "all_reduce", "all_gather") * 2)
    for spec, message in [
        ("torch_direct.py:mixed_dtypes", "ValueError: Invalid usage of tensors with different dtypes"),
        ("torch_direct.py:scatter_too_small", "ValueError: reduce_scatter_tensor: input has 3 elements"),
    ]:
        outcomes.clear()
        (result,) = run_torch(spec, seeds=[0])
        assert result.bug is not None and result.bug.message.startswith(message)
        assert outcomes and all(outcome.endswith("declined") for outcome in outcomes)
