"""A correct Ray program whose result is the same under real Ray and under dnsse."""

import asyncio

import ray
from ray.exceptions import TaskCancelledError
from ray.util import ActorPool
from ray.util.queue import Queue

SEEN = []


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


@ray.remote
def remember(x):
    SEEN.append(x)
    return len(SEEN)


@ray.remote(concurrency_groups={"io": 2})
class Grouped:
    def __init__(self):
        self.calls = 0

    @ray.method(concurrency_group="io")
    def fetch(self, x):
        return x + 1

    def count(self):
        return self.calls


@ray.remote
class Pair:
    @ray.method(num_returns=2)
    def split(self, x):
        return x, -x


@ray.remote
def count_to(n):
    for i in range(n):
        yield i


@ray.remote
class Gate:
    def is_open(self):
        return False


@ray.remote
def wait_at(gate):
    while not ray.get(gate.is_open.remote()):
        pass


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
    worker_counts = ray.get([remember.remote(i) for i in range(3)])
    result["globals"] = {"driver_sees": len(SEEN), "each_task_appended": all(n >= 1 for n in worker_counts)}
    grouped = Grouped.remote()
    result["groups"] = ray.get([grouped.fetch.remote(i) for i in range(3)])
    queue = Queue(maxsize=2)
    queue.put(1)
    queue.put_nowait(2)
    result["queue"] = [queue.get(), queue.get_nowait(), queue.empty()]
    pairs = ActorPool([Pair.remote() for _ in range(2)])
    result["pool_pairs"] = list(pairs.map(lambda actor, value: actor.split.remote(value), [1, 2, 3]))
    result["stream"] = [ray.get(ref) for ref in count_to.remote(3)]
    waiting = wait_at.remote(Gate.remote())
    ray.cancel(waiting)
    try:
        ray.get(waiting)
        result["cancelled"] = False
    except TaskCancelledError:
        result["cancelled"] = True
    if sink is not None:
        sink.append(result)
    return result
