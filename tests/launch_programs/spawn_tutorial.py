"""The launcher of PyTorch's distributed tutorials: ``mp.spawn(demo_fn, args=(world_size,), nprocs=world_size)``.

Shape of "Getting Started with Distributed Data Parallel" (setup/cleanup with
MASTER_ADDR/PORT and ``init_process_group("gloo", rank=rank, world_size=world_size)``)
and "Writing Distributed Applications with PyTorch" (point-to-point and
all_reduce). ``--demo ring`` passes a token around the ranks; ``--demo
ring-recv-first`` has every rank receive before it sends: a deadlock.
"""

import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def setup(rank: int, world_size: int) -> None:
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)


def cleanup() -> None:
    dist.destroy_process_group()


def demo_all_reduce(rank: int, world_size: int) -> None:
    setup(rank, world_size)
    tensor = torch.ones(1) * (rank + 1)
    dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
    assert tensor.item() == world_size * (world_size + 1) / 2
    cleanup()


def demo_ring(rank: int, world_size: int, recv_first: bool) -> None:
    setup(rank, world_size)
    token = torch.zeros(1)
    right, left = (rank + 1) % world_size, (rank - 1) % world_size
    if rank == 0 and not recv_first:
        token += 1
        dist.send(token, dst=right)
        dist.recv(token, src=left)
    else:
        dist.recv(token, src=left)
        token += 1
        dist.send(token, dst=right)
    if rank == 0:
        assert token.item() == world_size, token
    cleanup()


def run_demo(demo_fn, world_size: int, *args: object) -> None:
    mp.spawn(demo_fn, args=(world_size, *args), nprocs=world_size, join=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--demo", choices=["all_reduce", "ring", "ring-recv-first"], default="all_reduce")
    args = parser.parse_args()
    if args.demo == "all_reduce":
        run_demo(demo_all_reduce, args.world_size)
    else:
        run_demo(demo_ring, args.world_size, args.demo == "ring-recv-first")
