"""Async collectives: used correctly, touched before wait(), read before wait()."""

import torch
import torch.distributed as dist


def waits_properly(rank, world_size):
    t = torch.tensor([rank + 1.0])
    work = dist.all_reduce(t, async_op=True)
    other = torch.tensor([10.0 * rank])
    dist.all_reduce(other)
    work.wait()
    assert work.is_completed()
    assert t.item() == sum(r + 1.0 for r in range(world_size))
    assert other.item() == sum(10.0 * r for r in range(world_size))
    future = dist.all_reduce(t, async_op=True).get_future()
    assert future.wait()[0].item() == 2 * sum(r + 1.0 for r in range(world_size))


def modifies_before_wait(rank, world_size):
    t = torch.tensor([rank + 1.0])
    work = dist.all_reduce(t, async_op=True)
    t.mul_(2)  # the bug: the buffer belongs to the collective until wait()
    work.wait()


def reads_before_wait(rank, world_size):
    t = torch.tensor([rank + 1.0])
    work = dist.all_reduce(t, async_op=True)
    dist.barrier()
    early = t.clone()  # the bug: may or may not see the reduced value yet
    work.wait()
    assert torch.equal(early, t), f"read {early.item()} before wait(), {t.item()} after"


def async_values(rank, world_size):
    """Async variants give the sync results; one rank may wait while another blocks."""
    t = torch.full((2,), float(rank))
    work = dist.broadcast(t, src=1, async_op=True)
    gathered = [torch.zeros(1) for _ in range(world_size)]
    gather_work = dist.all_gather(gathered, torch.tensor([rank * 3.0]), async_op=True)
    out = torch.zeros(1)
    if rank == 0:
        scatter_work = dist.reduce_scatter(out, [torch.tensor([1.0 + i]) for i in range(world_size)], async_op=True)
        scatter_work.wait()
    else:
        dist.reduce_scatter(out, [torch.tensor([1.0 + i]) for i in range(world_size)])
    gather_work.wait()
    work.wait()
    assert t.tolist() == [1.0, 1.0]
    assert [g.item() for g in gathered] == [3.0 * r for r in range(world_size)]
    assert out.item() == world_size * (1.0 + rank)
