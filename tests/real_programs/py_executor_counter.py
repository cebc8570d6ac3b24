"""Workers of a ``ThreadPoolExecutor`` that update a shared total, as many services count work.

Each task adds its batch to ``Stats.total`` with a read, an addition and a
write; ``locked`` holds a lock around it, ``racy`` does not (a lost update
when two workers interleave). The pool is used as the documentation shows:
``submit`` in a ``with`` block, ``as_completed`` for the results.
"""
import concurrent.futures
import threading


class Stats:
    def __init__(self):
        self.total = 0
        self.lock = threading.Lock()

    def add_racy(self, n):
        current = self.total
        self.total = current + n
        return n

    def add_locked(self, n):
        with self.lock:
            current = self.total
            self.total = current + n
        return n


def _count(add_name):
    stats = Stats()
    batches = [1, 2, 3, 4]
    with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
        futures = [pool.submit(getattr(stats, add_name), n) for n in batches]
        done = sum(f.result() for f in concurrent.futures.as_completed(futures))
    assert done == sum(batches)
    assert stats.total == sum(batches), f"lost update: total {stats.total}, expected {sum(batches)}"
    return stats.total


def locked():
    return _count("add_locked")


def racy():
    return _count("add_racy")
