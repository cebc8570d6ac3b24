"""Small asyncio programs: each exercises one primitive under the controlled loop."""

import asyncio


async def _bump(state: dict, lock: asyncio.Lock | None) -> None:
    if lock is None:
        value = state["n"]
        await asyncio.sleep(0)
        state["n"] = value + 1
        return
    async with lock:
        value = state["n"]
        await asyncio.sleep(0)
        state["n"] = value + 1


def lost_update() -> None:
    async def main() -> int:
        state = {"n": 0}
        await asyncio.gather(*(_bump(state, None) for _ in range(2)))
        return state["n"]

    assert asyncio.run(main()) == 2


def locked_update() -> None:
    async def main() -> int:
        state = {"n": 0}
        lock = asyncio.Lock()
        async with asyncio.TaskGroup() as group:
            for _ in range(3):
                group.create_task(_bump(state, lock))
        return state["n"]

    assert asyncio.run(main()) == 3


def queue_pipeline() -> None:
    async def producer(queue: asyncio.Queue) -> None:
        for i in range(4):
            await queue.put(i)
        await queue.put(None)

    async def consumer(queue: asyncio.Queue, out: list) -> None:
        while (item := await queue.get()) is not None:
            out.append(item * 10)

    async def main() -> list:
        queue: asyncio.Queue = asyncio.Queue(maxsize=1)
        out: list = []
        await asyncio.gather(producer(queue), consumer(queue, out))
        return out

    assert asyncio.run(main()) == [0, 10, 20, 30]


def condition_and_semaphore() -> None:
    async def main() -> tuple:
        condition = asyncio.Condition()
        semaphore = asyncio.Semaphore(2)
        ready: list = []
        inside = {"now": 0, "most": 0}

        async def worker(i: int) -> None:
            async with semaphore:
                inside["now"] += 1
                inside["most"] = max(inside["most"], inside["now"])
                await asyncio.sleep(0.5)
                inside["now"] -= 1
            async with condition:
                ready.append(i)
                condition.notify_all()

        tasks = [asyncio.create_task(worker(i)) for i in range(4)]
        async with condition:
            await condition.wait_for(lambda: len(ready) == 4)
        await asyncio.gather(*tasks)
        return sorted(ready), inside["most"]

    assert asyncio.run(main()) == ([0, 1, 2, 3], 2)


def virtual_time() -> None:
    async def main() -> tuple:
        loop = asyncio.get_running_loop()
        start = loop.time()
        await asyncio.sleep(30)
        try:
            await asyncio.wait_for(asyncio.sleep(3600), timeout=60)
            timed_out = False
        except asyncio.TimeoutError:
            timed_out = True
        return loop.time() - start, timed_out

    elapsed, timed_out = asyncio.run(main())
    # 90 s of sleeps and timeouts, and a few steps' worth more: as a real run, a little over 90 s.
    assert 90.0 <= elapsed < 90.01 and timed_out, elapsed


def forgotten_event() -> None:
    async def main() -> None:
        started = asyncio.Event()
        done = asyncio.Event()

        async def worker() -> None:
            await started.wait()
            done.set()

        task = asyncio.create_task(worker())
        await done.wait()  # nobody sets ``started``
        await task

    asyncio.run(main())


def sleep_ordering() -> None:
    async def sleeper(delay: float, out: list) -> None:
        await asyncio.sleep(delay)
        out.append(delay)

    async def main() -> list:
        out: list = []
        await asyncio.gather(*(sleeper(d, out) for d in (3, 1, 2)))
        return out

    assert asyncio.run(main()) == [1, 2, 3]


def tasks_see_the_loops_thread() -> None:
    import threading

    async def name() -> str:
        return threading.current_thread().name

    async def main() -> list:
        return [await name(), await asyncio.create_task(name())]

    assert asyncio.run(main()) == ["MainThread", "MainThread"]


CANCELLED_AT_THE_END: list = []


def tasks_left_when_main_returns() -> None:
    """Tasks still waiting when main returns: asyncio.run cancels them in the order all_tasks() gives."""

    async def waiter(number: int, never: asyncio.Event) -> None:
        try:
            await never.wait()
        except asyncio.CancelledError:
            CANCELLED_AT_THE_END.append(number)
            raise

    async def main() -> list:
        never = asyncio.Event()
        tasks = [asyncio.create_task(waiter(number, never)) for number in range(40)]
        await asyncio.sleep(0)
        return [task.get_name() for task in asyncio.all_tasks() if task in tasks]

    CANCELLED_AT_THE_END.clear()
    names = asyncio.run(main())
    assert names == [f"Task-{number}" for number in range(2, 42)], names
    assert CANCELLED_AT_THE_END == list(range(40)), CANCELLED_AT_THE_END
