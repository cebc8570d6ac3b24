"""The torch framework as the runner sees it: inputs, activation, replay."""

from __future__ import annotations

import pytest
torch = pytest.importorskip("torch", reason="torch is not installed for this Python (it is an optional dependency)")
import torch.distributed as dist
from helpers import load_program, run_torch

from dnsse.engine.choices import ReplayChooser
from dnsse.engine.runner import run_execution
from dnsse.errors import BadInput
from dnsse.frameworks.base import framework_named
from dnsse.frameworks.torch_dist.c10d_world import RankLocalWorld
from dnsse.frameworks.torch_dist.framework import TorchFramework


def test_framework_named_torch_builds_the_torch_framework():
    framework = framework_named("torch", 3)
    assert isinstance(framework, TorchFramework) and framework.world_size == 3


def test_inputs_are_the_typed_keyword_parameters_after_rank_and_world_size():
    (parameter,) = TorchFramework(2).inputs(load_program("torch_inputs.py:main"))
    assert (parameter.name, parameter.type, parameter.default) == ("steps", int, 3)


def test_entry_point_with_a_rank_but_no_world_size_is_bad_input():
    with pytest.raises(BadInput, match=r"must take \(rank, world_size, \.\.\.\)"):
        TorchFramework(2).inputs(load_program("torch_inputs.py:only_rank"))


def test_an_entry_point_that_takes_no_rank_launches_the_ranks_and_its_keyword_parameters_are_inputs():
    (parameter,) = TorchFramework(2).inputs(load_program("torch_inputs.py:no_rank"))
    assert (parameter.name, parameter.type, parameter.default) == ("steps", int, 3)


def test_activate_installs_the_backend_and_per_rank_state_and_puts_them_back():
    original = dist.init_process_group, dist.distributed_c10d.init_process_group, dist.distributed_c10d._world
    threads = torch.get_num_threads()
    framework = TorchFramework(2)
    with framework.activate():
        assert dist.init_process_group is not original[0]
        assert dist.distributed_c10d.init_process_group is dist.init_process_group
        assert isinstance(dist.distributed_c10d._world, RankLocalWorld)
        assert "DNSSE" in dist.Backend._plugins
        assert torch.get_num_threads() == 1
    assert (dist.init_process_group, dist.distributed_c10d.init_process_group, dist.distributed_c10d._world) == original
    assert torch.get_num_threads() == threads


def test_outside_a_controlled_rank_no_process_group_exists():
    with TorchFramework(2).activate():
        assert dist.is_initialized() is False
        with pytest.raises(ValueError, match="Default process group has not been initialized"):
            dist.all_reduce(torch.zeros(1))


def test_module_globals_are_per_rank():
    for result in run_torch("torch_inputs.py:globals_per_rank", seeds=range(10)):
        assert result.bug is None, result.bug.render()


@pytest.mark.parametrize(
    ("spec", "world_size"),
    [("torch_p2p.py:any_source", 3), ("torch_async.py:reads_before_wait", 2), ("torch_p2p.py:send_send", 2)],
)
def test_replaying_recorded_choices_reproduces_the_bug(spec, world_size):
    found = next(r for r in run_torch(spec, world_size=world_size, seeds=range(50)) if r.bug is not None)
    target = load_program(spec)
    framework = TorchFramework(world_size)
    with framework.activate():
        replayed = run_execution(target, framework, ReplayChooser(found.choices))
    assert replayed.divergence is None
    assert replayed.bug is not None
    assert (replayed.bug.kind, replayed.bug.message) == (found.bug.kind, found.bug.message)
