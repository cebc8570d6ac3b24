"""torch programs that call parts of torch that run outside the controlled ranks."""

import torch.distributed as dist
import torch.multiprocessing as mp


def own_store(rank: int, world_size: int) -> None:
    try:
        store = dist.TCPStore("127.0.0.1", 29511, world_size, rank == 0)
        store.set(f"rank{rank}", "ready")
    except Exception as error:  # a broad handler must not turn the refusal into a pass
        print("store failed:", error)


def _work(index: int) -> None:
    pass


def spawns(rank: int, world_size: int) -> None:
    if rank == 0:
        mp.spawn(_work, nprocs=2)
