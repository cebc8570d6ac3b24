"""Callers that reach the process group from C++ or through torch's higher layers."""

from datetime import timedelta

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.nn as nn
from torch.distributed.device_mesh import init_device_mesh
from torch.nn.parallel import DistributedDataParallel as DDP


def ddp_step(rank, world_size):
    torch.manual_seed(rank)  # DDP's initial broadcast makes the replicas equal
    model = nn.Linear(3, 2)
    ddp = DDP(model)
    ddp(torch.full((4, 3), float(rank + 1))).sum().backward()
    grads = [torch.zeros_like(model.weight) for _ in range(world_size)]
    dist.all_gather(grads, model.weight.grad)
    assert all(torch.equal(g, grads[0]) for g in grads), "DDP left the gradients unequal"
    # The mean of the ranks' gradients: input rows of (r + 1), four of them, summed over outputs.
    expected = 4 * sum(r + 1 for r in range(world_size)) / world_size
    assert torch.allclose(model.weight.grad, torch.full((2, 3), expected)), model.weight.grad


def mesh_and_functional(rank, world_size):
    mesh = init_device_mesh("cuda", (world_size,))
    reduced = funcol.all_reduce(torch.full((2,), float(rank)), "sum", mesh)
    assert reduced.tolist() == [sum(range(world_size))] * 2
    gathered = funcol.all_gather_tensor(torch.tensor([rank]), 0, mesh)
    assert gathered.tolist() == list(range(world_size))


def dtensor_sum(rank, world_size):
    from torch.distributed.tensor import Shard, distribute_tensor

    mesh = init_device_mesh("cpu", (world_size,))
    full = torch.arange(4.0 * world_size).reshape(world_size * 2, 2)
    sharded = distribute_tensor(full, mesh, [Shard(0)])
    assert sharded.to_local().shape == (2, 2)
    assert torch.equal(sharded.full_tensor(), full)


def fsdp_step(rank, world_size):
    from torch.distributed.fsdp import fully_shard

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    for layer in model:
        if isinstance(layer, nn.Linear):
            fully_shard(layer)
    fully_shard(model)
    model(torch.ones(2, 4)).sum().backward()
    for parameter in model.parameters():
        assert parameter.grad is not None


def subgroups(rank, world_size):
    mine, _ = dist.new_subgroups(group_size=2)
    total = torch.tensor([float(rank)])
    dist.all_reduce(total, group=mine)
    first = rank - rank % 2
    assert total.item() == first + first + 1
    split = dist.split_group(split_ranks=[[0, 2], [1, 3]])
    parity = torch.tensor([1.0])
    dist.all_reduce(parity, group=split)
    assert parity.item() == 2.0
    dist.barrier()


def monitored_missing_rank(rank, world_size):
    if rank == 0:
        dist.monitored_barrier(timeout=timedelta(seconds=2))
    else:
        dist.recv(torch.zeros(1), src=0)  # the bug: rank 1 never reaches the barrier


def monitored_all_present(rank, world_size):
    dist.monitored_barrier(timeout=timedelta(seconds=2), wait_all_ranks=True)


def coalesced_and_batched(rank, world_size):
    a, b = torch.full((2,), float(rank)), torch.full((3,), 1.0)
    dist.all_reduce_coalesced([a, b])
    assert a.tolist() == [sum(range(world_size))] * 2 and b.tolist() == [world_size] * 3
    out = torch.zeros(world_size)
    with dist._coalescing_manager(async_ops=True) as manager:
        dist.all_gather_into_tensor(out, torch.tensor([float(rank)]))
    manager.wait()
    assert out.tolist() == [float(r) for r in range(world_size)]
