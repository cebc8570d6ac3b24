"""A driver that uses Ray only through the actor and task of ``workers.py``: it never imports ray itself.

``run`` waits for every task it started before reading the counter.
``run_missing_get`` starts the tasks and reads the counter at once, so the
tasks' increments may not have happened yet.
"""

import workers
from workers import Counter, bump


def run() -> int:
    workers.ray.init(ignore_reinit_error=True)
    counter = Counter.remote()
    workers.ray.get([bump.remote(counter) for _ in range(3)])
    value = workers.ray.get(counter.value.remote())
    assert value == 3, value
    return value


def run_missing_get() -> int:
    workers.ray.init(ignore_reinit_error=True)
    counter = Counter.remote()
    for _ in range(2):
        bump.remote(counter)
    value = workers.ray.get(counter.value.remote())
    assert value == 2, f"the counter read {value}: the tasks had not all run"
    return value
