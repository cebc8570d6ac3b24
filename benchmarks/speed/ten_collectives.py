"""A 2-rank data-parallel step with ten collectives: the speed benchmark's program."""

import torch
import torch.distributed as dist


def main(rank: int, world_size: int) -> None:
    grads = [torch.full((16,), float(rank + i)) for i in range(4)]
    works = [dist.all_reduce(g, async_op=True) for g in grads[:2]]
    for g in grads[2:]:
        dist.all_reduce(g)
    for work in works:
        work.wait()
    params = torch.zeros(16)
    dist.broadcast(params, src=0)
    gathered = [torch.zeros(1) for _ in range(world_size)]
    dist.all_gather(gathered, torch.tensor([float(rank)]))
    loss = torch.tensor([float(rank)])
    dist.reduce(loss, dst=0)
    dist.barrier()
    shard = torch.zeros(4)
    dist.reduce_scatter_tensor(shard, torch.arange(4.0 * world_size))
    dist.all_reduce(loss)
    expected = sum(float(r) for r in range(world_size))
    assert grads[0][0].item() == expected, grads[0]
