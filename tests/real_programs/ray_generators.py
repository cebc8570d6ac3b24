"""Generators as Ray's documentation shows them: streaming (the default), a fixed ``num_returns``, ``"dynamic"``.

``run`` reads a streaming generator, waits on one with ``ray.wait``, reads
an actor's generator and a dynamic one, whose error (after one value)
stays in its last ref, and generators with ``num_returns=3`` (the pattern
"using generators to reduce heap memory usage": one ref per yielded value)
and ``num_returns=1`` (one ref, not a list). ``run_first_ready`` waits on two generators and
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


@ray.remote(num_returns=3)
def large_values(num_returns):
    for i in range(num_returns):
        yield [i] * 2


@ray.remote(num_returns=1)
def single():
    yield "only"


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
    fixed = ray.get(list(large_values.remote(3)))
    outcome = [streamed, first, from_actor, dynamic_values, ray.get(refs[0]), len(refs), failed, fixed,
               ray.get(single.remote())]
    expected = [[0, 1, 2], 0, [100, 101], [0, 10, 20], 1, 2, True, [[0, 0], [1, 1], [2, 2]], "only"]
    assert outcome == expected, outcome
    return outcome


def run_first_ready() -> int:
    ray.init(ignore_reinit_error=True)
    first, second = stream.remote(1, 0), stream.remote(1, 5)
    ready, _ = ray.wait([first, second], num_returns=1)
    assert ready[0] is first, "the second generator was ready first"
    return ray.get(next(first))
