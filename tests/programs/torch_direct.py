"""Collectives that may skip torch's API, sync and async, while other operations are unsettled; and those that may not."""

import torch
import torch.distributed as dist


def overlapped(rank, world_size):
    """Async collectives of every kind left unsettled while synchronous ones run; the values checked."""
    a = torch.full((4,), float(rank))
    work_a = dist.all_reduce(a, async_op=True)
    b = torch.full((3,), float(rank + 1))
    work_b = dist.broadcast(b, src=world_size - 1, async_op=True)
    gathered = [torch.zeros(2) for _ in range(world_size)]
    work_g = dist.all_gather(gathered, torch.tensor([rank, -rank], dtype=torch.float32), async_op=True)
    r = torch.tensor([rank + 1.0])
    work_r = dist.reduce(r, dst=world_size - 1, op=dist.ReduceOp.MAX, async_op=True)
    shard = torch.zeros(2)
    work_s = dist.reduce_scatter_tensor(shard, torch.arange(2.0 * world_size) * (rank + 1), async_op=True)
    c = torch.tensor([float(rank)])
    dist.all_reduce(c, op=dist.ReduceOp.MIN)
    d = torch.full((2,), float(rank))
    dist.broadcast(d, src=0)
    e = torch.tensor([rank * 2])
    dist.reduce(e, dst=0)
    pieces = [torch.zeros(1, dtype=torch.int64) for _ in range(world_size)]
    dist.all_gather(pieces, torch.tensor([rank * 7]))
    f = torch.zeros(1)
    dist.reduce_scatter_tensor(f, torch.ones(world_size) * rank)
    for work in (work_s, work_r, work_g, work_b, work_a):
        work.wait()
    total = sum(range(world_size))
    assert a.tolist() == [float(total)] * 4
    assert b.tolist() == [float(world_size)] * 3
    assert [g.tolist() for g in gathered] == [[float(i), float(-i)] for i in range(world_size)]
    assert rank != world_size - 1 or r.item() == float(world_size)
    scale = sum(range(1, world_size + 1))
    assert shard.tolist() == [2.0 * rank * scale, (2.0 * rank + 1) * scale]
    assert c.item() == 0.0 and d.tolist() == [0.0, 0.0]
    assert rank != 0 or e.item() == 2 * total
    assert [p.item() for p in pieces] == [7 * i for i in range(world_size)]
    assert f.item() == float(total)


def declined(rank, world_size):
    """Calls torch's own path serves: a non-bool async_op, a root as a group rank, complex tensors."""
    t = torch.ones(2)
    work = dist.all_reduce(t, async_op=0)
    assert work is None and t.tolist() == [float(world_size)] * 2
    dist.broadcast(t, group_src=1)
    z = torch.ones(2, dtype=torch.complex64) * (1 + 1j)
    dist.all_reduce(z)
    assert z.tolist() == [world_size * (1 + 1j)] * 2
    gathered = [torch.zeros(1, dtype=torch.complex64) for _ in range(world_size)]
    dist.all_gather(gathered, torch.ones(1, dtype=torch.complex64) * rank)
    assert [g.item() for g in gathered] == [complex(i) for i in range(world_size)]


def mixed_dtypes(rank, world_size):
    """torch refuses a gather into tensors of another dtype: its message, as without dnsse."""
    gathered = [torch.zeros(1, dtype=torch.float64) for _ in range(world_size)]
    dist.all_gather(gathered, torch.ones(1))


def scatter_too_small(rank, world_size):
    """The backend's own size check, raised on torch's path."""
    dist.reduce_scatter_tensor(torch.zeros(2), torch.ones(3))


def gathered_before_wait(rank, world_size):
    gathered = [torch.zeros(1) for _ in range(world_size)]
    work = dist.all_gather(gathered, torch.tensor([float(rank)]), async_op=True)
    dist.broadcast(torch.zeros(1), src=0)
    gathered[0].add_(1)  # the bug: the outputs belong to the collective until wait()
    work.wait()


def root_disagrees(rank, world_size):
    """Each rank names itself the root: a mismatch."""
    t = torch.ones(1)
    work = dist.reduce(t, dst=rank, async_op=True)
    work.wait()
