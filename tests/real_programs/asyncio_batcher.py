"""An asyncio request batcher, as model servers write them.

Clients submit requests; one batcher task waits for the first request,
lingers briefly so that more requests join the batch, runs the model on the
batch, and answers every request of it. ``serve`` is correct; in
``serve_lossy`` the batcher empties the whole pending list after the model
ran, dropping the requests that arrived while it awaited the model: a race
across an ``await`` that shows only when a request arrives at the moment the
model finishes.
"""

import asyncio

LINGER = 0.25
MODEL_TIME = 0.125
IDLE_POLL = 0.5
REQUEST_TIMEOUT = 4.0


class Batcher:
    def __init__(self, max_batch: int, drop_late_arrivals: bool = False) -> None:
        self.max_batch = max_batch
        self.drop_late_arrivals = drop_late_arrivals
        self.pending: list = []
        self.arrived = asyncio.Event()
        self.closed = False
        self.batch_sizes: list[int] = []

    async def submit(self, x: int) -> int:
        answer = asyncio.get_running_loop().create_future()
        self.pending.append((x, answer))
        self.arrived.set()
        return await asyncio.wait_for(answer, timeout=REQUEST_TIMEOUT)

    async def run(self) -> None:
        while not self.closed:
            try:
                await asyncio.wait_for(self.arrived.wait(), timeout=IDLE_POLL)
            except asyncio.TimeoutError:
                continue
            await asyncio.sleep(LINGER)
            batch = self.pending[: self.max_batch]
            outputs = await self.model([x for x, _ in batch])
            if self.drop_late_arrivals:
                self.pending = []
            else:
                del self.pending[: len(batch)]
            if not self.pending:
                self.arrived.clear()
            self.batch_sizes.append(len(batch))
            for (_, answer), y in zip(batch, outputs):
                answer.set_result(y)

    async def model(self, xs: list[int]) -> list[int]:
        await asyncio.sleep(MODEL_TIME)
        return [x * x for x in xs]


async def client(batcher: Batcher, i: int) -> int:
    await asyncio.sleep(MODEL_TIME * i)
    return await batcher.submit(i)


async def serve_async(clients: int, drop_late_arrivals: bool) -> list[int]:
    batcher = Batcher(max_batch=4, drop_late_arrivals=drop_late_arrivals)
    worker = asyncio.create_task(batcher.run())
    answers = await asyncio.gather(*(client(batcher, i) for i in range(clients)))
    batcher.closed = True
    await worker
    assert sum(batcher.batch_sizes) == clients, batcher.batch_sizes
    return answers


def serve(clients: int = 6) -> None:
    if clients < 1:
        raise ValueError(f"clients must be at least 1, got {clients}")
    answers = asyncio.run(serve_async(clients, drop_late_arrivals=False))
    assert answers == [i * i for i in range(clients)], answers


def serve_lossy(clients: int = 6) -> None:
    if clients < 1:
        raise ValueError(f"clients must be at least 1, got {clients}")
    answers = asyncio.run(serve_async(clients, drop_late_arrivals=True))
    assert answers == [i * i for i in range(clients)], answers


if __name__ == "__main__":
    serve()
    serve_lossy()
    print("ok")
