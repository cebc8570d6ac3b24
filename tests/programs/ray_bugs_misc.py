"""A task's error that the driver does not handle."""

import ray


@ray.remote
def lookup(key):
    table = {"present": 1}
    return table[key]


def unhandled_task_error():
    assert ray.get(lookup.remote("present")) == 1
    ray.get(lookup.remote("missing"))
