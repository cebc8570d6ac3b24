"""NumPy arrays out of Ray's object store are read-only: Ray reads them without copying.

``run`` copies the array it gets before changing it, and a task copies its
argument. ``run_in_place`` writes into the array ``ray.get`` returned,
which fails under Ray with ``ValueError: assignment destination is
read-only``; ``run_task_in_place`` does the same with a task's argument.
"""

import numpy as np
import ray


@ray.remote
def scaled(weights, factor):
    out = weights.copy()
    out *= factor
    return out


@ray.remote
def scale_in_place(weights, factor):
    weights *= factor
    return weights


def run() -> list:
    ray.init(ignore_reinit_error=True)
    weights = ray.get(ray.put(np.ones(3))).copy()
    weights[0] = 5.0
    doubled = ray.get(scaled.remote(weights, 2.0))
    assert not doubled.flags.writeable
    assert doubled.tolist() == [10.0, 2.0, 2.0], doubled
    return doubled.tolist()


def run_in_place() -> list:
    ray.init(ignore_reinit_error=True)
    weights = ray.get(ray.put(np.ones(3)))
    weights[0] = 5.0
    return weights.tolist()


def run_task_in_place() -> list:
    ray.init(ignore_reinit_error=True)
    return ray.get(scale_in_place.remote(np.ones(3), 2.0)).tolist()
