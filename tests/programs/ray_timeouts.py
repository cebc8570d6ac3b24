"""Ray timeouts that fire only as a choice: a busy sync actor, and a slow task."""

import ray
from ray.util import ActorPool


@ray.remote
class TaskStore:
    def get_next_task(self):
        return "task"


@ray.remote
class TaskExecutor:
    def __init__(self, task_store):
        self.task_store = task_store
        self.num_executed = 0

    def run(self):
        while True:
            task = ray.get(self.task_store.get_next_task.remote())
            self._execute_task(task)

    def _execute_task(self, task):
        self.num_executed = self.num_executed + 1

    def get_num_executed(self):
        return self.num_executed


def sync_actor_blocks_its_thread():
    """From Ray's docs on async actors: ``run`` occupies the actor's only thread forever."""
    ray.init()
    task_store = TaskStore.remote()
    task_executor = TaskExecutor.remote(task_store)
    task_executor.run.remote()
    try:
        ray.get(task_executor.get_num_executed.remote(), timeout=5)
        raise AssertionError("get_num_executed ran although run never returns")
    except ray.exceptions.GetTimeoutError:
        pass


@ray.remote
def square(x):
    return x * x


def slow_task_get():
    ref = square.remote(3)
    try:
        assert ray.get(ref, timeout=10) == 9
    except ray.exceptions.GetTimeoutError:
        raise AssertionError("ray.get timed out while the task was merely slow") from None


def slow_task_wait():
    ready, _ = ray.wait([square.remote(2)], timeout=10)
    if not ready:
        raise AssertionError("ray.wait timed out while the task was merely slow")


@ray.remote
class Squarer:
    def compute(self, x):
        return x * x


def slow_pool():
    pool = ActorPool([Squarer.remote()])
    pool.submit(lambda actor, value: actor.compute.remote(value), 4)
    try:
        assert pool.get_next(timeout=10) == 16
    except ray.exceptions.GetTimeoutError:
        raise AssertionError("ActorPool.get_next timed out while the actor was merely slow") from None
