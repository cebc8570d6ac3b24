"""asyncio inside async actors: create_task, asyncio.Queue, wait_for and locks on the actor's loop."""

import asyncio

import ray


@ray.remote
class Doubler:
    def __init__(self):
        self.queue = asyncio.Queue()
        self.worker = None

    async def submit(self, x):
        if self.worker is None:
            self.worker = asyncio.create_task(self._drain())
        answer = asyncio.get_running_loop().create_future()
        await self.queue.put((x, answer))
        return await asyncio.wait_for(answer, timeout=10)

    async def _drain(self):
        while True:
            x, answer = await self.queue.get()
            await asyncio.sleep(0.1)
            answer.set_result(2 * x)


def queue_in_an_actor():
    doubler = Doubler.remote()
    assert ray.get([doubler.submit.remote(i) for i in range(3)]) == [0, 2, 4]


@ray.remote
class Cache:
    def __init__(self):
        self.lock = asyncio.Lock()
        self.data = {}
        self.me = None

    def set_handle(self, handle):
        self.me = handle[0]

    async def get_or_load(self, key):
        async with self.lock:
            if key not in self.data:
                self.data[key] = await self.me.load.remote(key)
            return self.data[key]

    async def load(self, key):
        async with self.lock:  # the caller holds it while it awaits this call
            return key.upper()


def lock_held_across_a_call_to_itself():
    cache = Cache.remote()
    ray.get(cache.set_handle.remote([cache]))
    assert ray.get(cache.get_or_load.remote("a")) == "A"
