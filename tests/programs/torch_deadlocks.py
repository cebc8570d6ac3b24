"""Plain deadlocks: the report must name what each rank waits for."""

import torch
import torch.distributed as dist


def collective_vs_recv(rank, world_size):
    t = torch.ones(1)
    if rank == 0:
        dist.all_reduce(t)
        dist.send(t, dst=1)
    else:
        dist.recv(t, src=0)
        dist.all_reduce(t)


def unsent_isend_wait(rank, world_size):
    t = torch.ones(1)
    if rank == 0:
        dist.isend(t, dst=1, tag=7).wait()
    dist.barrier()


def crossed_groups(rank, world_size):
    pair = dist.new_group([0, 1])
    t = torch.ones(1)
    if rank == 0:
        dist.all_reduce(t, group=pair)
        dist.all_reduce(t)
    else:
        dist.all_reduce(t)
        dist.all_reduce(t, group=pair)
