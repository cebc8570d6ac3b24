"""An async actor as in Ray's documentation: many requests served concurrently on one event loop.

``serve_locked`` guards the read-await-write of its counter with an
``asyncio.Lock``; ``serve_racy`` does not, so two requests that both await
the (simulated) model between reading and writing the counter lose one
increment: a race across an ``await``.
"""

import asyncio

import ray


@ray.remote
class Model:
    def predict(self, x):
        return 2 * x


@ray.remote
class Server:
    def __init__(self, model, locked):
        self.model = model
        self.served = 0
        self.lock = asyncio.Lock()
        self.locked = locked

    async def handle(self, x):
        if self.locked:
            async with self.lock:
                return await self._handle(x)
        return await self._handle(x)

    async def _handle(self, x):
        served = self.served
        y = await self.model.predict.remote(x)
        self.served = served + 1
        return y

    async def count(self):
        return self.served


def _serve(locked: bool, requests: int) -> None:
    ray.init()
    server = Server.remote(Model.remote(), locked)
    answers = ray.get([server.handle.remote(i) for i in range(requests)])
    assert answers == [2 * i for i in range(requests)]
    served = ray.get(server.count.remote())
    assert served == requests, f"served {served} of {requests} requests"


def serve_locked(requests: int = 3) -> None:
    if requests < 1:
        raise ValueError(f"requests must be at least 1, got {requests}")
    _serve(True, requests)


def serve_racy(requests: int = 3) -> None:
    if requests < 1:
        raise ValueError(f"requests must be at least 1, got {requests}")
    _serve(False, requests)
