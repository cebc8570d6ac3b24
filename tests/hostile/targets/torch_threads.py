"""A rank that starts threads of its own: they are agents, scheduled and checked like the ranks."""

import threading

import torch
import torch.distributed as dist

DONE = []


def main(rank: int, world_size: int) -> None:
    first, second = threading.Lock(), threading.Lock()

    def helper() -> None:
        with second:
            with first:
                DONE.append(rank)

    worker = threading.Thread(target=helper)
    worker.start()
    with first:
        with second:
            DONE.append(rank)
    worker.join()
    value = torch.ones(1)
    dist.all_reduce(value)


def clean(rank: int, world_size: int) -> None:
    lock = threading.Lock()
    results = []

    def helper() -> None:
        with lock:
            results.append(rank)

    workers = [threading.Thread(target=helper) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(results) == 2
    value = torch.ones(1)
    dist.all_reduce(value)
