"""Small torch programs whose schedules can be counted."""

import torch
import torch.distributed as dist


def any_source(rank, world_size):
    """Rank 0 takes two messages from any source and expects rank 1's first (world size 3)."""
    if rank == 0:
        first = torch.zeros(1)
        source = dist.recv(first)
        second = torch.zeros(1)
        dist.recv(second)
        assert source == 1, f"expected rank 1's message first, got rank {source}'s"
    else:
        dist.send(torch.tensor([float(rank)]), dst=0)


def reduce_then_exchange(rank, world_size):
    """A collective then a ring exchange: correct in every schedule."""
    value = torch.tensor([float(rank)])
    dist.all_reduce(value)
    right, left = (rank + 1) % world_size, (rank - 1) % world_size
    inbox = torch.zeros(1)
    if rank % 2 == 0:
        dist.send(value, dst=right)
        dist.recv(inbox, src=left)
    else:
        dist.recv(inbox, src=left)
        dist.send(value, dst=right)
    assert inbox.item() == value.item()


def touches_buffer_after_barrier(rank, world_size):
    """The buffer of an async all_reduce is changed before wait(), with a barrier in between."""
    value = torch.ones(1)
    work = dist.all_reduce(value, async_op=True)
    dist.barrier()
    value.add_(1)
    work.wait()
