"""A correct Ray program whose result is the same under real Ray and under dnsse."""

import asyncio

import ray
from ray.util import ActorPool


@ray.remote
def square(x):
    return x * x


@ray.remote
def total(refs):
    return sum(ray.get(refs))


@ray.remote
class Accumulator:
    def __init__(self, start):
        self.value = start

    def add(self, amount):
        self.value += amount
        return self.value


@ray.remote
class Scaler:
    def scale(self, value):
        return 3 * value


@ray.remote
class AsyncCache:
    def __init__(self):
        self.entries = {}
        self.lock = asyncio.Lock()

    async def put(self, key, ref_holder):
        value = await ref_holder[0]
        async with self.lock:
            self.entries[key] = value
        await asyncio.sleep(0.01)
        return len(self.entries)

    async def snapshot(self):
        return dict(sorted(self.entries.items()))


def main(sink=None):
    squares = [square.remote(i) for i in range(6)]
    ready, _ = ray.wait(squares, num_returns=6)
    result = {"squares": ray.get(squares), "ready": len(ready), "sum": ray.get(total.remote(squares))}
    accumulator = Accumulator.remote(100)
    for amount in range(1, 4):
        accumulator.add.remote(amount)
    result["accumulated"] = ray.get(accumulator.add.remote(0))
    shared = ray.put({"alpha": 1})
    cache = AsyncCache.remote()
    ray.get([cache.put.remote(f"k{i}", [square.remote(i)]) for i in range(3)])
    result["cache"] = ray.get(cache.snapshot.remote())
    result["shared"] = ray.get(shared)
    pool = ActorPool([Scaler.remote() for _ in range(2)])
    result["pool"] = list(pool.map(lambda actor, value: actor.scale.remote(value), [5, 6, 7]))
    if sink is not None:
        sink.append(result)
    return result
