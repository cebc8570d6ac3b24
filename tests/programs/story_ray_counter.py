"""Two workers increment a counter held by a sync actor with a get and a set: an update is lost."""

import ray


@ray.remote
class Counter:
    def __init__(self):
        self.n = 0

    def get(self):
        return self.n

    def set(self, value):
        self.n = value


@ray.remote
def increment(counter):
    value = ray.get(counter.get.remote())
    ray.get(counter.set.remote(value + 1))


def main():
    ray.init()
    counter = Counter.remote()
    ray.get([increment.remote(counter), increment.remote(counter)])
    assert ray.get(counter.get.remote()) == 2, "an increment was lost"
