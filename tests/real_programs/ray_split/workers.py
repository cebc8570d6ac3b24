"""The actor and task of ``driver.py``, in a file of their own, as larger Ray programs keep them."""

import ray


@ray.remote
class Counter:
    def __init__(self):
        self.n = 0

    def incr(self):
        self.n += 1
        return self.n

    def value(self):
        return self.n


@ray.remote
def bump(counter):
    return ray.get(counter.incr.remote())
