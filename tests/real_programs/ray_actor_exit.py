"""Ending an actor on purpose: ``__ray_terminate__`` and ``ray.actor.exit_actor()``.

``__ray_terminate__`` waits for the calls submitted before it; the calls
after it, and ``exit_actor``'s own call, fail with ``ActorDiedError``.
``run`` expects exactly that. ``run_other_caller`` lets a task use the
actor while the driver terminates it: the task's call may come after the
end, and the task does not expect the actor to be gone.
"""

import ray
from ray.actor import exit_actor


@ray.remote
class Counter:
    def __init__(self):
        self.n = 0

    def incr(self):
        self.n += 1
        return self.n

    def leave(self):
        exit_actor()


@ray.remote
def use(counter):
    return ray.get(counter.incr.remote())


def _died(ref) -> bool:
    try:
        ray.get(ref)
    except ray.exceptions.ActorDiedError:
        return True
    return False


def run() -> list:
    ray.init(ignore_reinit_error=True)
    counter = Counter.remote()
    before = counter.incr.remote()
    end = counter.__ray_terminate__.remote()
    after = counter.incr.remote()
    outcome = [ray.get(before), _died(end), _died(after)]
    other = Counter.remote()
    ray.get(other.incr.remote())
    outcome += [_died(other.leave.remote()), _died(other.incr.remote())]
    assert outcome == [1, True, True, True, True], outcome
    return outcome


def run_other_caller() -> int:
    ray.init(ignore_reinit_error=True)
    counter = Counter.remote()
    used = use.remote(counter)
    counter.__ray_terminate__.remote()
    return ray.get(used)
