"""DeviceMesh, DTensor and tensor parallelism, in the shape of torchtitan's.

Correct: a 2D ("dp", "tp") mesh on 4 ranks with ``distribute_tensor``,
``redistribute`` and ``full_tensor``; ``parallelize_module`` with
``ColwiseParallel``/``RowwiseParallel`` on a small MLP, trained two steps.

``loss_parallel_tp``: a column-parallel head whose cross-entropy runs under
``loss_parallel()``, which changes DTensor's process-wide op table on entry
and exit (each rank's process has its own).

Bug variant: ``tp_log_on_rank0``, logging the full weight on rank 0 only
(``full_tensor()`` is an all-gather the other ranks never join).
"""
import json
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate, Shard, distribute_tensor
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, loss_parallel, parallelize_module


def save(name, rank, **values):
    out = os.environ.get("DNSSE_COMPARE_DIR")
    if out:
        with open(os.path.join(out, f"{name}-rank{rank}.json"), "w") as f:
            json.dump({k: v.tolist() for k, v in values.items()}, f)


def mesh_2d(rank, world_size):
    dist.init_process_group("gloo")
    mesh = init_device_mesh("cpu", (2, world_size // 2), mesh_dim_names=("dp", "tp"))
    torch.manual_seed(0)
    full = torch.randn(4, 4)
    d = distribute_tensor(full, mesh, [Shard(0), Shard(1)])
    r = d.redistribute(mesh, [Replicate(), Shard(0)])
    s = (d * 2).sum()
    dp = mesh["dp"].get_group()
    t = torch.tensor([float(rank)])
    dist.all_reduce(t, group=dp)
    save("mesh2d", rank, local=d.to_local(), redist=r.to_local(), full=r.full_tensor(), s=s.full_tensor(), t=t)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(8, 16)
        self.w2 = nn.Linear(16, 8)

    def forward(self, x):
        return self.w2(torch.relu(self.w1(x)))


def tensor_parallel(rank, world_size):
    dist.init_process_group("gloo")
    mesh = init_device_mesh("cpu", (world_size,))
    torch.manual_seed(0)
    model = MLP()
    model = parallelize_module(model, mesh, {"w1": ColwiseParallel(), "w2": RowwiseParallel()})
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(1)
    x = torch.randn(4, 8)
    for _ in range(2):
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    save("tp", rank, w1=model.w1.weight.full_tensor(), w2=model.w2.weight.full_tensor(), loss=loss.detach())


def loss_parallel_tp(rank, world_size):
    dist.init_process_group("gloo")
    mesh = init_device_mesh("cpu", (world_size,))
    torch.manual_seed(0)
    head = parallelize_module(nn.Linear(8, 6), mesh, ColwiseParallel(use_local_output=False))
    x = torch.randn(4, 8)
    y = torch.randint(0, 6, (4,))
    with loss_parallel():
        loss = nn.functional.cross_entropy(head(x), y)
        loss.backward()
    save("loss_parallel", rank, loss=loss.full_tensor().detach(), grad=head.weight.grad.full_tensor())


def tp_log_on_rank0(rank, world_size):
    """Logging the full weight on rank 0 only: full_tensor() is an all-gather."""
    dist.init_process_group("gloo")
    mesh = init_device_mesh("cpu", (world_size,))
    torch.manual_seed(0)
    model = parallelize_module(MLP(), mesh, {"w1": ColwiseParallel(), "w2": RowwiseParallel()})
    model(torch.randn(4, 8)).sum().backward()
    if rank == 0:
        print(model.w1.weight.full_tensor().norm())
    dist.barrier()
