"""A Ray script whose driver is its ``__main__`` block (the shape of Ray Core's actor examples).

``--max-concurrency 2`` makes the counter a threaded actor whose increments
read and write the count without a lock: increments get lost.
"""

import argparse

import ray


@ray.remote
class Counter:
    def __init__(self) -> None:
        self.count = 0

    def increment(self) -> int:
        value = self.count
        self.count = value + 1
        return self.count

    def get(self) -> int:
        return self.count


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--max-concurrency", type=int, default=1)
    parser.add_argument("--calls", type=int, default=3)
    args = parser.parse_args()
    ray.init()
    counter = Counter.options(max_concurrency=args.max_concurrency).remote()
    ray.get([counter.increment.remote() for _ in range(args.calls)])
    total = ray.get(counter.get.remote())
    assert total == args.calls, f"lost an increment: {total} of {args.calls}"
    ray.shutdown()
