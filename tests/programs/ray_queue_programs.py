"""ray.util.queue.Queue between a producer task and consumer tasks."""

import ray
from ray.util.queue import Empty, Queue


@ray.remote
def producer(queue, items):
    for item in items:
        queue.put(item)


@ray.remote
def consumer(queue, count, timeout=None):
    return [queue.get(timeout=timeout) for _ in range(count)]


def pipeline():
    queue = Queue(maxsize=2)
    producer.remote(queue, list(range(6)))
    got = ray.get([consumer.remote(queue, 3), consumer.remote(queue, 3)])
    assert sorted(got[0] + got[1]) == list(range(6)), got
    assert queue.empty() and len(queue) == 0


def nowait_and_timeouts():
    queue = Queue()
    queue.put_nowait_batch([1, 2, 3])
    assert queue.get_nowait_batch(2) == [1, 2]
    assert queue.get_nowait() == 3
    try:
        queue.get(timeout=1)
    except Empty:
        timed_out = True
    else:
        timed_out = False
    assert timed_out
    try:
        queue.get_nowait()
    except Empty:
        return
    raise AssertionError("get_nowait on an empty queue did not raise Empty")


def consumers_want_more_than_produced():
    queue = Queue()
    producer.remote(queue, [1, 2, 3])
    ray.get([consumer.remote(queue, 2, 5), consumer.remote(queue, 2, 5)])
