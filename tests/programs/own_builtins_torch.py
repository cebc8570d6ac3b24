"""Ranks that replace ``print``, as torchvision's references (and DETR, DeiT, MAE after them) do."""

import torch
import torch.distributed as dist


def setup_for_distributed(is_master: bool) -> None:
    """Every rank but the master prints only when forced (the references' helper, in its shape)."""
    import builtins as __builtin__

    builtin_print = __builtin__.print

    def print(*args, **kwargs):
        force = kwargs.pop("force", False)
        if is_master or force:
            builtin_print(*args, **kwargs)

    __builtin__.print = print


def quiet_ranks(rank: int, world_size: int, fail: bool = False) -> None:
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    setup_for_distributed(rank == 0)
    total = torch.ones(2) * (rank + 1)
    dist.all_reduce(total)
    print(f"rank {rank} sum {total.tolist()}")
    print(f"rank {rank} forced", force=True)
    dist.barrier()
    assert not (fail and rank == 1), "rank 1 fails after printing"
    dist.destroy_process_group()
