"""Rank 0 saves a checkpoint while rank 1 loads it: the load may fall inside the save."""

import torch
import torch.distributed as dist

import dnsse

DNSSE_SPECS = ["G(save_begin -> (!load U save_end))"]


def save_and_load(rank, world_size):
    if rank == 0:
        dnsse.emit("save_begin", rank=rank)
        checkpoint = {"weights": torch.ones(2)}
        dnsse.emit("save_end", rank=rank, keys=len(checkpoint))
    else:
        dnsse.emit("load", rank=rank)
    dist.barrier()
