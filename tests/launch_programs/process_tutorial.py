"""The launcher of "Writing Distributed Applications with PyTorch": one ``mp.Process`` per rank.

``run`` is the tutorial's blocking point-to-point example; ``--recv-first``
makes rank 0 receive before it sends, as rank 1 does: a deadlock.
"""

import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def run(rank: int, size: int, recv_first: bool) -> None:
    tensor = torch.zeros(1)
    if rank == 0:
        tensor += 1
        if recv_first:
            dist.recv(tensor=tensor, src=1)
        dist.send(tensor=tensor, dst=1)
    else:
        dist.recv(tensor=tensor, src=0)
        assert tensor[0].item() == 1.0
        if recv_first:
            dist.send(tensor=tensor, dst=0)


def init_process(rank: int, size: int, fn, recv_first: bool, backend: str = "gloo") -> None:
    """Initialize the distributed environment."""
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29500"
    dist.init_process_group(backend, rank=rank, world_size=size)
    fn(rank, size, recv_first)
    dist.destroy_process_group()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--recv-first", action="store_true")
    args = parser.parse_args()
    world_size = 2
    processes = []
    for rank in range(world_size):
        p = mp.Process(target=init_process, args=(rank, world_size, run, args.recv_first))
        p.start()
        processes.append(p)

    for p in processes:
        p.join()
        assert p.exitcode == 0, p.exitcode
