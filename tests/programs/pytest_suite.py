"""A user's test module with @dnsse.test tests (copied as test_suite.py by tests/test_pytest_plugin.py)."""

import threading

import torch
import torch.distributed as dist

import dnsse


class Counter:
    def __init__(self):
        self.count = 0
        self.lock = threading.Lock()


@dnsse.test(framework="threads", budget=100, strategy="random", seed=0)
def test_lost_update():
    counter = Counter()

    def bump():
        seen = counter.count
        counter.count = seen + 1

    threads = [threading.Thread(target=bump) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter.count == 2, f"lost update: {counter.count}"


@dnsse.test(framework="threads", budget=30)
def test_locked_counter():
    counter = Counter()

    def bump():
        with counter.lock:
            counter.count += 1

    threads = [threading.Thread(target=bump) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counter.count == 2


@dnsse.test(framework="torch", world_size=2, budget=20)
def test_barrier_on_one_rank(rank, world_size):
    value = torch.ones(1)
    dist.all_reduce(value)
    if rank == 1:
        dist.barrier()


@dnsse.test(framework="threads", budget=20, spec="G !stale")
def test_spec_violation():
    dnsse.emit("stale")
