"""A shard gatherer whose reorder buffer overflows only when one rank reaches the barrier last.

Three ranks: rank 1 sends the number of shards, rank 2 streams the shards,
rank 0 takes whatever arrives first (an any-source receive) and keeps shards
that come before their count in a buffer one shard short of them all. Only a
schedule where rank 1's single send comes after all of rank 2's (rank 1, the
first to reach the barrier in most runs, reaches it last) overflows it: a
random schedule makes that 1 in 2**SHARDS. ``main`` asserts the bound;
``large_buffer`` keeps every shard, as it should. Run with ``--world-size 3``.
"""

import torch
import torch.distributed as dist

SHARDS = 6


def _gather(rank, buffer):
    if rank == 0:
        count = None
        pending = []
        stored = 0
        while count is None or stored < count:
            box = torch.zeros(1)
            source = dist.recv(box)
            if source == 1:
                count = int(box.item())
                stored += len(pending)
                pending.clear()
            elif count is None:
                pending.append(box)
                assert len(pending) <= buffer, f"{len(pending)} shards arrived before their count (room for {buffer})"
            else:
                stored += 1
    elif rank == 1:
        dist.send(torch.tensor([float(SHARDS)]), dst=0)
    else:
        for index in range(SHARDS):
            dist.send(torch.tensor([float(index)]), dst=0)
    dist.barrier()


def main(rank, world_size):
    _gather(rank, SHARDS - 1)


def large_buffer(rank, world_size):
    _gather(rank, SHARDS)
