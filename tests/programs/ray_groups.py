"""Concurrency groups, max_pending_calls, ActorPool with several returns, per-worker globals."""

import ray
from ray.util import ActorPool

LOG = []


@ray.remote(concurrency_groups={"io": 2, "compute": 1})
class Store:
    def __init__(self):
        self.count = 0

    @ray.method(concurrency_group="io")
    def bump(self):
        value = self.count
        self.count = value + 1

    @ray.method(concurrency_group="compute")
    def bump_alone(self):
        value = self.count
        self.count = value + 1

    def read(self):
        return self.count


def group_of_two_races():
    store = Store.remote()
    ray.get([store.bump.remote() for _ in range(2)])
    assert ray.get(store.read.remote()) == 2


def group_of_one_is_serial():
    store = Store.remote()
    ray.get([store.bump_alone.remote() for _ in range(3)])
    assert ray.get(store.read.remote()) == 3


def group_by_options():
    store = Store.remote()
    ray.get([store.bump_alone.options(concurrency_group="io").remote() for _ in range(2)])
    assert ray.get(store.read.remote()) == 2


@ray.remote(max_pending_calls=2)
class Slow:
    def work(self, x):
        return x


def too_many_pending():
    slow = Slow.remote()
    refs = [slow.work.remote(i) for i in range(3)]
    return ray.get(refs)


def pending_within_limit():
    slow = Slow.remote()
    total = 0
    for i in range(4):
        total += ray.get(slow.work.remote(i))
    assert total == 6


@ray.remote
class Splitter:
    @ray.method(num_returns=2)
    def split(self, x):
        return x, -x


def pool_two_returns():
    pool = ActorPool([Splitter.remote() for _ in range(2)])
    results = list(pool.map(lambda a, v: a.split.remote(v), [1, 2, 3]))
    assert results == [[1, -1], [2, -2], [3, -3]], results


@ray.remote
def remember(x):
    LOG.append(x)
    return len(LOG)


def globals_stay_in_workers():
    """A task sees its own entry, and those of earlier tasks in its worker process; the driver sees none."""
    lengths = ray.get([remember.remote(i) for i in range(3)])
    assert all(1 <= n <= 3 for n in lengths) and sum(n == 1 for n in lengths) >= 1, lengths
    assert LOG == [], LOG


def closure_captures_a_module():
    """Remote code defined in the driver uses a module the driver imported: it travels by name."""
    import json

    @ray.remote
    def encode(value):
        return json.dumps(value)

    @ray.remote
    class Cache:
        def __init__(self):
            self.entries = {}

        def put(self, key, value):
            self.entries[key] = json.loads(value)
            return len(self.entries)

    cache = Cache.remote()
    assert ray.get(cache.put.remote("a", encode.remote([1, 2]))) == 1


def mutating_a_global_in_a_task():
    """The classic mistake: the driver expects to see what tasks appended."""
    ray.get([remember.remote(i) for i in range(3)])
    assert len(LOG) == 3, f"the driver's LOG has {len(LOG)} entries"
