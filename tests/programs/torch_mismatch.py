"""Ranks that disagree about which collective comes next."""

import torch
import torch.distributed as dist


def shape_mismatch(rank, world_size):
    tokens = [3, 5][rank % 2]  # data-dependent: each rank saw a different batch
    t = torch.ones(tokens)
    dist.all_reduce(t)


def op_mismatch(rank, world_size):
    t = torch.ones(2)
    if t.sum().item() + rank > 2:
        dist.broadcast(t, src=0)
    else:
        dist.all_reduce(t)


def skips_last(rank, world_size):
    t = torch.ones(2)
    dist.all_reduce(t)
    if rank == 0:
        dist.all_reduce(t)


def skips_last_async(rank, world_size):
    t = torch.ones(2)
    dist.all_reduce(t)
    if rank == 0:
        dist.all_reduce(t, async_op=True)
