"""Ranks woken by another rank's step after they blocked: a completed collective, a received send.

The scheduler skips testing the wait of a rank that sleeps on such an event
(dnsse.engine.readiness); these programs must run to the same end, with the
same schedules, as when every wait is tested at every step.
"""

import torch
import torch.distributed as dist


def relay(rank, world_size):
    """Each rank receives from the one before it, sends to the next, then all meet in an all-reduce."""
    t = torch.zeros(1)
    if rank > 0:
        dist.recv(t, src=rank - 1)
    t += 1
    if rank < world_size - 1:
        dist.send(t, dst=rank + 1)
    total = torch.tensor([float(rank)])
    dist.all_reduce(total)
    assert total.item() == sum(range(world_size)), total
    if rank == world_size - 1:
        assert t.item() == world_size, t


def early_and_late(rank, world_size):
    """The last rank arrives at each collective only after a blocking send to rank 0, which others wait behind."""
    t = torch.ones(2)
    for round_ in range(3):
        if rank == world_size - 1:
            dist.send(torch.tensor([float(round_)]), dst=0)
        if rank == 0:
            got = torch.zeros(1)
            dist.recv(got, src=world_size - 1)
            assert got.item() == round_, got
        dist.all_reduce(t)
        dist.barrier()
    assert t[0].item() == world_size**3, t


def send_then_barrier(rank, world_size):
    """Rank 0's send is never received: rank 0 sleeps in the send, the others in the barrier: a deadlock."""
    if rank == 0:
        dist.send(torch.ones(1), dst=1)
    dist.barrier()
