"""Ray programs whose verdict depends on time: documentation patterns that real Ray runs without a bug."""

import time

import ray
from ray.util import ActorPool


@ray.remote
class TaskStore:
    def get_next_task(self):
        return "task"


@ray.remote
class AsyncTaskExecutor:
    def __init__(self, task_store):
        self.task_store = task_store
        self.num_executed = 0

    async def run(self):
        while True:
            task = await self.task_store.get_next_task.remote()
            self._execute_task(task)

    def _execute_task(self, task):
        self.num_executed = self.num_executed + 1

    def get_num_executed(self):
        return self.num_executed


def async_actor_serves_while_run_loops():
    """Ray's docs (AsyncIO for actors): the async actor answers get_num_executed while run loops forever."""
    ray.init()
    task_store = TaskStore.remote()
    executor = AsyncTaskExecutor.remote(task_store)
    executor.run.remote()
    assert ray.get(executor.get_num_executed.remote()) >= 0


@ray.remote
def add(a, b):
    return a + b


def get_with_a_timeout():
    ray.init()
    assert ray.get(add.remote(1, 2), timeout=5) == 3


@ray.remote
class Doubler:
    def double(self, value):
        return 2 * value


def actor_pool_get_next_with_a_timeout():
    """As Ray's own ActorPool test: get_next(timeout=..., ignore_if_timedout=True)."""
    ray.init()
    actors = [Doubler.remote(), Doubler.remote()]
    ray.get([actor.double.remote(0) for actor in actors])  # started: what is timed below is the calls alone
    pool = ActorPool(actors)
    for value in range(4):
        pool.submit(lambda actor, v: actor.double.remote(v), value)
    results = []
    while pool.has_next():
        results.append(pool.get_next(timeout=1, ignore_if_timedout=True))
    assert results == [0, 2, 4, 6], results


@ray.remote
class Rendezvous:
    def __init__(self):
        self.members = set()

    def register(self, rank):
        self.members.add(rank)

    def count(self):
        return len(self.members)


@ray.remote
class TrainWorker:
    def __init__(self, store, rank, world_size):
        self.store, self.rank, self.world_size = store, rank, world_size

    def barrier(self):
        ray.get(self.store.register.remote(self.rank))
        while ray.get(self.store.count.remote()) < self.world_size:
            time.sleep(0.01)
        return self.rank


def worker_group_meets_at_a_polling_barrier():
    """Ray Train's worker group: each worker registers on a store actor, then polls until all have."""
    ray.init()
    store = Rendezvous.remote()
    workers = [TrainWorker.remote(store, rank, 2) for rank in range(2)]
    assert sorted(ray.get([worker.barrier.remote() for worker in workers])) == [0, 1]


if __name__ == "__main__":
    # What the real-Ray comparison runs: every program, in one Ray session.
    import sys

    ray.init(num_cpus=4)
    ray.init = lambda *args, **kwargs: None
    for name in sys.argv[1:]:
        globals()[name]()
        print(f"passed: {name}", flush=True)
