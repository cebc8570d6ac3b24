"""Bugs that need one agent held back while the others run on: what the advisor's delays find.

- ``lock_order``: a batch scheduler takes the queue lock, then the cache lock;
  the evictor scans the cache's blocks first, then takes the cache lock, then
  the queue lock. They deadlock only when the evictor, after its whole scan,
  takes the cache lock while the scheduler holds the queue lock and has not
  yet taken the cache lock: the holder of the contended queue lock delayed.
- ``ordered_locks``: the same threads taking the locks in one order: correct.
- ``large_batches_evict_first``: the evictor takes the locks in the inverted
  order only for batches over 6: the delay finds the deadlock only under
  such an input, which the search tries again with other inputs.
"""

import threading
from typing import Annotated

import dnsse

BLOCKS = 12


class Cache:
    def __init__(self):
        self.blocks = [0] * BLOCKS
        self.free = 0
        self.queue = []


def _run(*bodies):
    threads = [threading.Thread(target=body) for body in bodies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _serve(evictor_takes_queue_first):
    cache = Cache()
    queue_lock = threading.Lock()
    cache_lock = threading.Lock()

    def scheduler():
        with queue_lock:
            cache.queue.append("request")
            with cache_lock:
                cache.blocks[0] = 1

    def evictor():
        # The scan reads shared state without a lock: each read is a scheduling point.
        unused = sum(1 for block in cache.blocks if block == 0)
        first, second = (queue_lock, cache_lock) if evictor_takes_queue_first else (cache_lock, queue_lock)
        with first:
            with second:
                cache.free = unused
                cache.queue.clear()

    _run(scheduler, evictor)


def lock_order():
    _serve(evictor_takes_queue_first=False)


def ordered_locks():
    _serve(evictor_takes_queue_first=True)


def large_batches_evict_first(batch: Annotated[int, dnsse.Range(1, 8)] = 1):
    _serve(evictor_takes_queue_first=batch <= 6)
