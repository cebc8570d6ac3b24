"""A message, a collective, then a barrier only rank 1 issues (the HTML timeline's arrows and failing step)."""

import torch
import torch.distributed as dist


def main(rank, world_size):
    value = torch.zeros(1)
    if rank == 0:
        dist.send(torch.ones(1), dst=1)
    else:
        dist.recv(value, src=0)
    dist.all_reduce(value)
    print(f"<rank {rank}> got {value.item()} </pre><img src=x onerror=alert(1)>")
    if rank == 1:
        dist.barrier()
