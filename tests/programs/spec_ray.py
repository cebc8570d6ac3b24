"""A Ray driver checked against LTL specifications over Ray's runtime events."""

import ray


@ray.remote
def square(x):
    return x * x


@ray.remote
class Counter:
    def __init__(self):
        self.total = 0

    def add(self, amount):
        self.total += amount
        return self.total


def main():
    ray.init()
    squares = [square.remote(i) for i in range(2)]
    counter = Counter.remote()
    counter.add.remote(1)
    assert ray.get(counter.add.remote(2)) == 3
    assert ray.get(squares) == [0, 1]
    ray.shutdown()
