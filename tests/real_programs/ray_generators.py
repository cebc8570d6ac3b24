"""Generators as Ray's documentation shows them: streaming (the default) and ``num_returns="dynamic"``.

``run`` reads a streaming generator, waits on one with ``ray.wait``, reads
an actor's generator and a dynamic one, whose error (after one value)
stays in its last ref. ``run_first_ready`` waits on two generators and
assumes the first one is ready first: either may be.
"""

import ray


@ray.remote
def stream(n, start=0):
    for i in range(n):
        yield start + i


@ray.remote(num_returns="dynamic")
def dynamic(n):
    for i in range(n):
        yield 10 * i


@ray.remote(num_returns="dynamic")
def dynamic_failing():
    yield 1
    raise KeyError("no more")


@ray.remote
class Source:
    def values(self, n):
        for i in range(n):
            yield 100 + i


def run() -> list:
    ray.init(ignore_reinit_error=True)
    streamed = [ray.get(ref) for ref in stream.remote(3)]
    waited = stream.options(num_returns="streaming").remote(2)
    ready, _ = ray.wait([waited])
    first = ray.get(next(ready[0]))
    from_actor = [ray.get(ref) for ref in Source.remote().values.remote(2)]
    dynamic_values = [ray.get(ref) for ref in ray.get(dynamic.remote(3))]
    refs = list(ray.get(dynamic_failing.remote()))
    try:
        ray.get(refs[-1])
        failed = False
    except KeyError:
        failed = True
    outcome = [streamed, first, from_actor, dynamic_values, ray.get(refs[0]), len(refs), failed]
    assert outcome == [[0, 1, 2], 0, [100, 101], [0, 10, 20], 1, 2, True], outcome
    return outcome


def run_first_ready() -> int:
    ray.init(ignore_reinit_error=True)
    first, second = stream.remote(1, 0), stream.remote(1, 5)
    ready, _ = ray.wait([first, second], num_returns=1)
    assert ready[0] is first, "the second generator was ready first"
    return ray.get(next(first))
