"""An ActorPool whose calls wait on a barrier that only later calls can fill: starvation."""

import asyncio

import ray
from ray.util import ActorPool


@ray.remote
class Barrier:
    def __init__(self, parties):
        self.parties = parties
        self.arrived = 0
        self.full = asyncio.Event()

    async def arrive(self):
        self.arrived += 1
        if self.arrived == self.parties:
            self.full.set()
        await self.full.wait()
        return self.arrived


@ray.remote
class Stage:
    def run(self, barrier, item):
        ray.get(barrier.arrive.remote())
        return item * 10


def run(workers, items=3):
    barrier = Barrier.remote(items)
    pool = ActorPool([Stage.remote() for _ in range(workers)])
    results = list(pool.map(lambda stage, item: stage.run.remote(barrier, item), range(items)))
    assert results == [0, 10, 20]


def starved():
    run(workers=2)


def enough_workers():
    run(workers=3)
