"""A torch program whose ranks each import a sibling module: one copy per rank, as one process per rank."""

import torch
import torch.distributed as dist

import tally


def main(rank: int, world_size: int) -> None:
    assert tally.bump() == 1, f"rank {rank} sees tally.runs {tally.runs}: the ranks share one copy"
    value = torch.ones(1)
    dist.all_reduce(value)
    assert value.item() == world_size
