"""Ray's fault-tolerance pages: workers killed with ``os._exit`` on purpose, an actor restarted, a task retried.

``run_actor`` is the documentation's actor that exits its process on its
fourth call: with ``max_restarts`` and ``max_task_retries=-1`` Ray restarts
it (its state starts over) and runs the call again, so the driver only ever
sees counts 1 to 3. ``run_task`` runs a task that always exits its worker:
after its retry it fails with ``WorkerCrashedError``, which the driver
expects, as it does for a task that calls ``sys.exit``. ``run_actor_without_retries`` declares restarts but no task
retries and does not expect the call that killed the process to fail.
"""

import os
import sys

import ray


@ray.remote(max_restarts=4, max_task_retries=-1)
class Actor:
    def __init__(self):
        self.counter = 0

    def increment_and_possibly_fail(self):
        if self.counter == 3:
            os._exit(0)
        self.counter += 1
        return self.counter


@ray.remote(max_restarts=4)
class ActorWithoutRetries:
    def __init__(self):
        self.counter = 0

    def increment_and_possibly_fail(self):
        if self.counter == 3:
            os._exit(0)
        self.counter += 1
        return self.counter


@ray.remote(max_retries=1)
def potentially_fail():
    os._exit(0)


@ray.remote(max_retries=0)
def leave():
    sys.exit(3)


def run_actor() -> list:
    ray.init(ignore_reinit_error=True)
    actor = Actor.remote()
    counts = [ray.get(actor.increment_and_possibly_fail.remote()) for _ in range(6)]
    assert all(1 <= count <= 3 for count in counts), counts
    return counts


def run_task() -> list:
    ray.init(ignore_reinit_error=True)
    outcomes = []
    for task in (potentially_fail, leave):
        try:
            ray.get(task.remote())
            outcomes.append("returned")
        except ray.exceptions.WorkerCrashedError:
            outcomes.append("crashed")
    assert outcomes == ["crashed", "crashed"], outcomes
    return outcomes


def run_actor_without_retries() -> list:
    ray.init(ignore_reinit_error=True)
    actor = ActorWithoutRetries.remote()
    return [ray.get(actor.increment_and_possibly_fail.remote()) for _ in range(6)]
