"""Subgroups, process-group queries and an init/destroy pair as real scripts write them."""

import torch
import torch.distributed as dist


def subgroups(rank, world_size):
    evens = dist.new_group(ranks=[0, 2])
    odds = dist.new_group(ranks=[1, 3])
    mine = evens if rank % 2 == 0 else odds
    other = odds if rank % 2 == 0 else evens
    assert other == dist.GroupMember.NON_GROUP_MEMBER
    assert dist.get_world_size(mine) == 2 and mine.size() == 2
    assert dist.get_rank(mine) == rank // 2 == mine.rank()
    assert dist.get_rank(other) == -1
    assert dist.get_process_group_ranks(mine) == [rank % 2, rank % 2 + 2]
    assert dist.get_global_rank(mine, 1) == rank % 2 + 2
    assert dist.get_group_rank(mine, rank) == rank // 2
    t = torch.tensor([float(rank)])
    dist.all_reduce(t, group=mine)
    assert t.item() == (2.0 if rank % 2 == 0 else 4.0)
    assert dist.all_reduce(torch.zeros(1), group=other) is None
    leader = torch.tensor([float(rank)])
    dist.broadcast(leader, src=rank % 2 + 2, group=mine)
    assert leader.item() == rank % 2 + 2
    total = torch.tensor([1.0])
    dist.all_reduce(total, group=dist.group.WORLD)
    assert total.item() == world_size


def with_init(rank, world_size):
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:1", rank=rank, world_size=world_size)
    assert dist.is_initialized()
    assert dist.get_rank() == rank and dist.get_world_size() == world_size
    assert dist.get_backend() == "gloo"
    t = torch.tensor([1.0])
    dist.all_reduce(t)
    assert t.item() == world_size
    dist.barrier()
    dist.destroy_process_group()
    assert not dist.is_initialized()
