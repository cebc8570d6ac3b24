"""Ray's streaming generators from async actors, as its generator documentation uses them.

An async actor's ``async def`` method that ``yield``s streams: the call returns
an ``ObjectRefGenerator`` (imported from ``ray._raylet``, as the
documentation's type hints do), which the driver iterates with ``for`` and
``ray.get``, and an async actor or the driver's own coroutine with ``async
for`` and ``await``. ``TokenStreamer`` serves two prompts at once, its
``stream`` keeping each request's words in the call's own variables.

Bug variant: ``run_shared_request``, whose ``stream_shared`` keeps the request
on the actor (``self.prompt``): two interleaved streams read each other's.
"""

import asyncio

import ray
from ray._raylet import ObjectRefGenerator


@ray.remote
class TokenStreamer:
    def __init__(self):
        self.prompt = None

    async def stream(self, prompt):
        for word in prompt.split():
            await asyncio.sleep(0)
            yield word.upper()

    async def stream_shared(self, prompt):
        self.prompt = prompt
        for i in range(len(prompt.split())):
            await asyncio.sleep(0)
            yield self.prompt.split()[i].upper()


@ray.remote
class Collector:
    async def collect(self, streamer, prompt):
        gen = streamer.stream.remote(prompt)
        assert isinstance(gen, ObjectRefGenerator), type(gen)
        return [await ref async for ref in gen]


def _serve(method):
    streamer = TokenStreamer.remote()
    first = getattr(streamer, method).remote("the quick fox")
    second = getattr(streamer, method).remote("jumps over dogs")
    assert isinstance(first, ObjectRefGenerator), type(first)
    words = [ray.get(ref) for ref in first]
    more = [ray.get(ref) for ref in second]
    assert words == ["THE", "QUICK", "FOX"], words
    assert more == ["JUMPS", "OVER", "DOGS"], more
    return words + more


def run():
    served = _serve("stream")
    collected = ray.get(Collector.remote().collect.remote(TokenStreamer.remote(), "a b"))
    assert collected == ["A", "B"], collected

    async def consume():
        return [await ref async for ref in TokenStreamer.remote().stream.remote("c d")]

    consumed = asyncio.run(consume())
    assert consumed == ["C", "D"], consumed
    return served + collected + consumed


def run_shared_request():
    return _serve("stream_shared")
