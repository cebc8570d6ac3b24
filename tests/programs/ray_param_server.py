"""An async parameter server: an update read before an ``await`` and written after it is lost."""

import asyncio

import ray


@ray.remote
def scale(delta):
    return 2 * delta


@ray.remote
class ParameterServer:
    def __init__(self):
        self.weights = 0
        self.lock = asyncio.Lock()

    async def push(self, delta):
        current = self.weights
        gradient = await scale.remote(delta)
        self.weights = current + gradient

    async def push_atomically(self, delta):
        gradient = await scale.remote(delta)
        self.weights += gradient

    async def push_locked(self, delta):
        async with self.lock:
            current = self.weights
            gradient = await scale.remote(delta)
            self.weights = current + gradient

    async def get(self):
        await asyncio.sleep(0)
        return self.weights


@ray.remote
def worker(server, method, delta):
    ray.get(getattr(server, method).remote(delta))


def train(method):
    server = ParameterServer.remote()
    ray.get([worker.remote(server, method, 1) for _ in range(2)])
    weights = ray.get(server.get.remote())
    assert weights == 4, f"lost update: weights are {weights}, expected 4"


def lost_update():
    train("push")


def atomic_update():
    train("push_atomically")


def locked_update():
    train("push_locked")


async def _gathered(server):
    return await asyncio.gather(server.get.remote(), scale.remote(3))


@ray.remote
class Aggregator:
    async def both(self, server):
        values = await asyncio.gather(self.half(), server.get.remote())
        return values

    async def half(self):
        await asyncio.sleep(0.5)
        return 0.5


def gather_results():
    server = ParameterServer.remote()
    aggregator = Aggregator.remote()
    assert ray.get(aggregator.both.remote(server)) == [0.5, 0]
