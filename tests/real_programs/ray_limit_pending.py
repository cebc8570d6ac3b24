"""Ray's pattern "using ray.wait to limit the number of pending tasks".

``run`` keeps at most two tasks in flight and collects results as they
finish, in whatever order that is. ``run_in_order`` assumes ``ray.wait``
hands results back in submission order: under Ray the first task to finish
comes first, so the list it builds may be out of order. ``run_first_finished``
makes the same assumption of two tasks and one ``ray.wait``.
"""

import ray

IN_FLIGHT = 2


@ray.remote
def square(i):
    return i * i


def _collect(count: int) -> list:
    ray.init(ignore_reinit_error=True)
    pending, results = [], []
    for i in range(count):
        if len(pending) >= IN_FLIGHT:
            ready, pending = ray.wait(pending, num_returns=1)
            results += ray.get(ready)
        pending.append(square.remote(i))
    results += ray.get(pending)
    return results


def run() -> list:
    results = sorted(_collect(5))
    assert results == [0, 1, 4, 9, 16], results
    return results


def run_in_order() -> list:
    results = _collect(5)
    assert results == [0, 1, 4, 9, 16], f"results out of submission order: {results}"
    return results


def run_first_finished() -> int:
    ray.init(ignore_reinit_error=True)
    first, second = square.remote(1), square.remote(2)
    ready, _ = ray.wait([first, second], num_returns=1)
    assert ready[0] is first, "the second task finished first"
    return ray.get(ready[0])
