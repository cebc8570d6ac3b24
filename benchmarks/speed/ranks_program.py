"""Five all-reduces, one send/recv per rank pair and a barrier: the program of the ranks benchmark.

Ranks pair up as (0, 1), (2, 3)...; with an odd world size the last rank
sits the exchange out. Every rank checks what it received.
"""

import torch
import torch.distributed as dist


def main(rank: int, world_size: int) -> None:
    value = torch.full((4,), float(rank))
    for _ in range(5):
        dist.all_reduce(value)
    partner = rank ^ 1
    if partner < world_size:
        message = torch.tensor([float(rank)])
        if rank % 2 == 0:
            dist.send(message, partner)
        else:
            dist.recv(message, partner)
            assert message.item() == float(partner), message
    dist.barrier()
    total = sum(range(world_size)) * world_size**4
    assert value[0].item() == float(total), value
