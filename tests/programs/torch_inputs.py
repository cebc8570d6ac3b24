"""Entry points for the framework's own checks: inputs, signatures, per-rank globals."""

import torch
import torch.distributed as dist

SEEN = []


def main(rank, world_size, steps: int = 3, label="x"):
    for _ in range(steps):
        dist.barrier()


def no_rank(steps: int = 3):
    pass


def only_rank(rank):
    pass


def globals_per_rank(rank, world_size):
    SEEN.append(rank)
    dist.barrier()
    assert SEEN == [rank], f"rank {rank} sees another rank's module globals: {SEEN}"
    total = torch.tensor([float(len(SEEN))])
    dist.all_reduce(total)
    assert total.item() == world_size
