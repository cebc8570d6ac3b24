"""asyncio programs whose verdict depends on the loop's ready queue and its clock."""

import asyncio


def a_created_task_runs_at_the_next_sleep_zero():
    async def main():
        started = []

        async def worker():
            started.append(True)

        task = asyncio.create_task(worker())
        await asyncio.sleep(0)
        assert started == [True]
        await task

    asyncio.run(main())


def gathered_coroutines_start_in_creation_order():
    async def main():
        order = []

        async def worker(i):
            order.append(i)

        await asyncio.gather(*(worker(i) for i in range(4)))
        assert order == [0, 1, 2, 3], order

    asyncio.run(main())


def two_tasks_fetch_the_same_key():
    """Check-then-act across an await: both tasks miss the cache and fetch (a real bug)."""
    async def main():
        cache = {}
        fetches = []

        async def get(key):
            if key not in cache:
                fetches.append(key)
                await asyncio.sleep(0.01)
                cache[key] = len(fetches)
            return cache[key]

        await asyncio.gather(get("a"), get("a"))
        assert fetches == ["a"], fetches

    asyncio.run(main())


def a_batcher_awaited_with_wait_for():
    async def main():
        queue = asyncio.Queue()
        flushed = []

        async def flusher():
            batch = []
            while (item := await queue.get()) is not None:
                batch.append(item)
                if len(batch) == 2:
                    flushed.append(batch)
                    batch = []
            if batch:
                flushed.append(batch)

        task = asyncio.create_task(flusher())
        for i in range(5):
            await queue.put(i)
        await queue.put(None)
        await asyncio.wait_for(task, timeout=5)
        assert flushed == [[0, 1], [2, 3], [4]], flushed

    asyncio.run(main())


def an_engine_loop_with_a_step_timeout():
    """vLLM's async engine loop: each step under a 60 s asyncio.timeout, over a model that only yields."""
    async def main():
        requests = asyncio.Queue()
        outputs = {}

        async def model_step(batch):
            for _ in range(50):
                await asyncio.sleep(0)
            return {request: f"out-{request}" for request in batch}

        async def engine_loop():
            while True:
                batch = [await requests.get()]
                while not requests.empty():
                    batch.append(requests.get_nowait())
                stopping = None in batch
                batch = [request for request in batch if request is not None]
                if batch:
                    async with asyncio.timeout(60):
                        outputs.update(await model_step(batch))
                if stopping:
                    return

        loop_task = asyncio.create_task(engine_loop())
        for request in range(3):
            await requests.put(request)
            await asyncio.sleep(0)
        await requests.put(None)
        await loop_task
        assert outputs == {request: f"out-{request}" for request in range(3)}, outputs

    asyncio.run(main())
