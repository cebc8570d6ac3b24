"""A threaded actor (``max_concurrency=4``): its calls run at once in threads of one process and share ``self``.

``run_locked`` guards the read-modify-write with a ``threading.Lock``;
``run_racy`` does not, so two calls may read the same count and one
increment is lost.
"""

import threading

import ray


@ray.remote(max_concurrency=4)
class Counter:
    def __init__(self):
        self.n = 0
        self.lock = threading.Lock()

    def incr_locked(self):
        with self.lock:
            self.n += 1

    def incr(self):
        n = self.n
        self.n = n + 1

    def value(self):
        return self.n


def run_locked() -> int:
    ray.init(ignore_reinit_error=True)
    counter = Counter.remote()
    ray.get([counter.incr_locked.remote() for _ in range(4)])
    value = ray.get(counter.value.remote())
    assert value == 4, value
    return value


def run_racy() -> int:
    ray.init(ignore_reinit_error=True)
    counter = Counter.remote()
    ray.get([counter.incr.remote() for _ in range(4)])
    value = ray.get(counter.value.remote())
    assert value == 4, f"lost update: {value} of 4 increments"
    return value
