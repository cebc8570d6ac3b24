"""torch.distributed programs checked against LTL specifications (tests/test_spec_*)."""

import torch
import torch.distributed as dist

import dnsse


def exchange(rank, world_size):
    """A collective, a send/recv pair and an async collective with its wait()."""
    t = torch.tensor([float(rank)])
    dist.all_reduce(t)
    if rank == 0:
        dist.send(t, dst=1)
    elif rank == 1:
        dist.recv(t, src=0)
    work = dist.all_reduce(t, async_op=True)
    work.wait()


def replicas_agree(rank, world_size):
    for step in range(3):
        t = torch.tensor([float(rank + step)])
        dist.all_reduce(t)
        dnsse.emit("step_done", step=step, checksum=t.item())


def replicas_diverge(rank, world_size):
    for step in range(3):
        t = torch.tensor([float(rank + step)])
        dist.all_reduce(t)
        if rank == 1 and step == 2:
            t /= world_size  # the bug: only this rank averages
        dnsse.emit("step_done", step=step, checksum=t.item())
