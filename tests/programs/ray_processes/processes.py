"""Ray's worker processes are reused: a task's globals stay in its process for the next task there.

Under real Ray 2.60 on one CPU every task runs in the same process; on more,
a task may land on any idle one. ``observe`` returns what a program sees, to
compare with real Ray (tests/test_ray_real.py).
"""

import ray

import cache

LOG = []
SEEN = {}
_model = None


@ray.remote
def remember(x):
    LOG.append(x)
    return len(LOG)


@ray.remote
def note(value):
    SEEN["note"] = value


@ray.remote
def read_note():
    return SEEN.get("note")


@ray.remote
def load(key, value):
    cache.put(key, value)


@ray.remote
def lookup(key):
    return cache.lookup(key)


@ray.remote
def cached(key):
    return cache.STORE.get(key)


@ray.remote
class Reader:
    def read(self, key):
        return cache.STORE.get(key)


def _build():
    return {"weights": [1, 2, 3]}


@ray.remote
def predict(x):
    global _model
    if _model is None:  # load once per worker process: correct wherever the task runs
        _model = _build()
    return sum(_model["weights"]) * x


def observe(sink=None):
    """What a program sees on a one-CPU cluster (one worker process for tasks)."""
    ray.init(num_cpus=1, ignore_reinit_error=True)
    seen = {
        "lengths": [ray.get(remember.remote(i)) for i in range(3)],
        "driver_log": list(LOG),
    }
    ray.get(note.remote("hello"))
    seen["other_function_sees"] = ray.get(read_note.remote())
    ray.get(load.remote("w", 3))
    seen["lookup"] = ray.get(lookup.remote("w"))
    seen["actor_sees"] = ray.get(Reader.remote().read.remote("w"))
    seen["driver_cache"] = dict(cache.STORE)
    seen["predictions"] = ray.get([predict.remote(x) for x in range(3)])
    if sink is not None:
        sink.append(seen)
    return seen


def one_process_reuses_globals():
    seen = observe()
    assert seen == {
        "lengths": [1, 2, 3], "driver_log": [], "other_function_sees": None, "lookup": 3, "actor_sees": None,
        "driver_cache": {}, "predictions": [0, 6, 12],
    }, seen


def globals_stay_in_processes():
    """Any cluster: the driver's globals never change; a task sees its own entries, perhaps earlier ones."""
    lengths = ray.get([remember.remote(i) for i in range(3)])
    assert all(1 <= n <= 3 for n in lengths), lengths
    assert LOG == [], LOG
    assert ray.get([predict.remote(x) for x in range(3)]) == [0, 6, 12]


def cache_filled_by_another_task():
    """The bug: a task reads a module cache that another task filled, which works only in the same process."""
    ray.get(load.remote("w", 3))
    assert ray.get(lookup.remote("w")) == 3


def cache_filled_by_another_task_on_one_cpu():
    ray.init(num_cpus=1)
    cache_filled_by_another_task()


def cache_read_by_an_actor():
    """An actor runs in a process of its own: the cache that tasks filled is empty there."""
    ray.get(load.remote("w", 3))
    assert ray.get(Reader.remote().read.remote("w")) == 3


def every_task_in_a_new_process():
    """Expects no reuse: fails whenever two tasks share a process."""
    lengths = ray.get([remember.remote(i) for i in range(3)])
    assert lengths == [1, 1, 1], lengths


@ray.remote(max_calls=1)
def remember_once(x):
    LOG.append(x)
    return len(LOG)


def max_calls_retires_the_process():
    ray.init(num_cpus=1)
    assert [ray.get(remember_once.remote(i)) for i in range(3)] == [1, 1, 1]
