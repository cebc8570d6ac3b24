"""A retried Ray task counts its side effect twice: the portfolio's Ray yardstick (benchmarks/portfolio.py)."""

import ray


@ray.remote
class Counter:
    def __init__(self):
        self.count = 0

    def add(self, amount):
        self.count += amount

    def total(self):
        return self.count


@ray.remote(max_retries=1)
def record(counter, amount):
    ray.get(counter.add.remote(amount))


def retry_double_count():
    counter = Counter.remote()
    ray.get(record.remote(counter, 1))
    total = ray.get(counter.total.remote())
    assert total == 1, f"counted {total} for one record"
