"""Ranks that leave a thread pool open: each rank is a process, which ends with its own pool's workers."""

import concurrent.futures

import torch
import torch.distributed as dist


def pools_per_rank(rank: int, world_size: int) -> None:
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    total = torch.ones(2) * rank
    dist.all_reduce(total)
    # Rank 0 may end first: its end must not stop rank 1's pool.
    for _ in range(3 if rank == world_size - 1 else 0):
        assert pool.submit(lambda: total.sum().item()).result() == 2.0


def rank_task_never_done(rank: int, world_size: int) -> None:
    """Rank 1's pool still runs a task that waits for a message no rank sends: its process cannot end."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    if rank == 1:
        never = torch.zeros(1)
        pool.submit(dist.recv, never, 0)
