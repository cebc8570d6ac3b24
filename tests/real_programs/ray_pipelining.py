"""Pipelining as in Ray's documentation: a work queue actor feeds workers that prefetch their next item.

Each worker asks the queue for its next item before it processes the current
one, so fetching and processing overlap. In ``run`` the queue is a plain
actor, whose calls run one at a time. In ``run_threaded_queue`` the queue
actor is given ``max_concurrency=2`` for throughput, and its
``get_work_item`` (read the head, then drop it) is no longer atomic: two
workers can take the same item, and another is never processed.
"""

import ray


@ray.remote
class WorkQueue:
    def __init__(self, items):
        self.queue = list(items)

    def get_work_item(self):
        if self.queue:
            item = self.queue[0]
            self.queue = self.queue[1:]
            return item
        return None


@ray.remote
class WorkerWithPipelining:
    def __init__(self, work_queue):
        self.work_queue = work_queue
        self.done = []

    def process(self, item):
        self.done.append(item * item)

    def run(self):
        next_ref = self.work_queue.get_work_item.remote()
        while True:
            item = ray.get(next_ref)
            if item is None:
                break
            # Prefetch the next item while this one is processed.
            next_ref = self.work_queue.get_work_item.remote()
            self.process(item)
        return self.done


def _run(queue_options: dict, items: int) -> None:
    ray.init()
    work_queue = WorkQueue.options(**queue_options).remote(range(items))
    workers = [WorkerWithPipelining.remote(work_queue) for _ in range(2)]
    results = sorted(sum(ray.get([worker.run.remote() for worker in workers]), []))
    assert results == [i * i for i in range(items)], results


def run(items: int = 4) -> None:
    _run({}, items)


def run_threaded_queue(items: int = 4) -> None:
    _run({"max_concurrency": 2}, items)
