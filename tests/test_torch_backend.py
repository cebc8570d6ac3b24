"""Everything that reaches torch's process group reaches the controlled one."""

from __future__ import annotations

import pytest
from helpers import run_torch

from dnsse.engine.bugs import BugKind

pytestmark = pytest.mark.torch


@pytest.mark.parametrize(
    ("spec", "world_size"),
    [
        ("torch_backend.py:ddp_step", 2),
        ("torch_backend.py:mesh_and_functional", 2),
        ("torch_backend.py:dtensor_sum", 2),
        ("torch_backend.py:fsdp_step", 2),
        ("torch_backend.py:subgroups", 4),
        ("torch_backend.py:coalesced_and_batched", 2),
    ],
)
def test_callers_through_cpp_and_torch_layers_compute_the_right_values(spec, world_size):
    for result in run_torch(spec, world_size=world_size, seeds=range(8)):
        assert result.bug is None, result.bug.render()


def test_ddp_collectives_are_scheduling_points_of_the_controlled_group():
    (result,) = run_torch("torch_backend.py:ddp_step", seeds=[0])
    issued = [e.fields["op"] for e in result.events if e.name == "collective.issue" and e.fields["rank"] == 0]
    # _verify_params_across_processes gathers, _sync_module_states broadcasts, the reducer all-reduces.
    assert issued[:2] == ["all_gather", "broadcast"] and "all_reduce" in issued


def test_monitored_barrier_times_out_naming_the_missing_rank():
    for result in run_torch("torch_backend.py:monitored_missing_rank", seeds=range(5)):
        bug = result.bug
        assert bug is not None and bug.kind == BugKind.EXCEPTION
        assert "RuntimeError: [Rank 0]: Rank 1 failed to pass monitoredBarrier in 2000 ms" in bug.message


def test_monitored_barrier_passes_or_its_timeout_expires_naming_the_ranks_not_yet_there():
    results = run_torch("torch_backend.py:monitored_all_present", world_size=3, seeds=range(20))
    assert any(result.bug is None for result in results)
    for result in results:
        if result.bug is not None:
            assert "failed to pass monitoredBarrier in 2000 ms" in result.bug.message
            assert "[Rank 0]: Ranks " in result.bug.message


@pytest.mark.parametrize(
    "function", ["broadcast_into_parameter", "received_tensor_is_detached", "in_place_all_reduce_gradient"]
)
def test_transfers_are_invisible_to_autograd_as_with_gloo(function):
    for result in run_torch(f"torch_autograd.py:{function}", seeds=range(5)):
        assert result.bug is None, result.bug.render()
