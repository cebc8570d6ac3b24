"""Programs that change their ranks' default process group: each execution must start from a fresh one."""

import torch
import torch.distributed as dist


def one_rank_destroys(rank: int, world_size: int) -> None:
    # Rank 1 destroys its default group; rank 0 keeps it. The next execution gives both a working one.
    assert dist.is_initialized() and dist.get_rank() == rank and dist.get_world_size() == world_size
    value = torch.ones(1)
    dist.all_reduce(value)
    assert value.item() == world_size, value
    if rank == 1:
        dist.destroy_process_group()
        assert not dist.is_initialized()


def new_group_each_time(rank: int, world_size: int) -> None:
    # Groups made in one execution never reach the next: torch numbers them from 1 in each one.
    group = dist.new_group(list(range(world_size)))
    assert dist.distributed_c10d._world.group_count == 2, dist.distributed_c10d._world.group_count
    assert len(dist.distributed_c10d._world.pg_map) == 2
    value = torch.full((1,), float(rank))
    dist.all_reduce(value, group=group)
    assert value.item() == sum(range(world_size)), value
