"""Producers and consumers connected by ``ray.util.queue.Queue``, as in Ray's documentation.

``run`` puts one end-of-stream marker per consumer. ``run_one_marker`` puts
a single marker for two consumers: the consumer that does not get it waits
for an item that never comes, a hang under Ray, a deadlock here.
"""

import ray
from ray.util.queue import Queue

DONE = "done"


@ray.remote
def producer(queue, items, markers):
    for item in items:
        queue.put(item)
    for _ in range(markers):
        queue.put(DONE)


@ray.remote
def consumer(queue):
    taken = []
    while True:
        item = queue.get()
        if item == DONE:
            return taken
        taken.append(item)


def _run(markers: int) -> None:
    ray.init()
    queue = Queue(maxsize=2)
    producer.remote(queue, list(range(4)), markers)
    taken = ray.get([consumer.remote(queue) for _ in range(2)])
    assert sorted(taken[0] + taken[1]) == list(range(4)), taken


def run() -> None:
    _run(markers=2)


def run_one_marker() -> None:
    _run(markers=1)
