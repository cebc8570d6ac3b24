"""An entry function that launches its ranks with mp.spawn: ``dnsse check spawn_entry.py:main``."""

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank: int, world_size: int, fail_on: int) -> None:
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    value = torch.tensor([rank + 1.0])
    dist.all_reduce(value)
    if rank == fail_on:
        raise RuntimeError(f"rank {rank} failed after the all_reduce ({value.item()})")
    dist.destroy_process_group()


def main() -> None:
    mp.spawn(worker, args=(2, -1), nprocs=2, join=True)


def main_failing_rank() -> None:
    context = mp.spawn(worker, args=(2, 1), nprocs=2, join=False)
    while not context.join():
        pass
