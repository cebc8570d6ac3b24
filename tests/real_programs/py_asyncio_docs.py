"""asyncio programs in the shape of the CPython documentation's examples.

Each correct version checks its own results against what plain Python gives;
each ``*_bug`` variant has a bug a real run can show.
"""

import asyncio
import contextvars
import threading
import time


async def _worker(queue, done):
    while True:
        delay = await queue.get()
        await asyncio.sleep(delay)
        done.append(delay)
        queue.task_done()


def queue_workers():
    """The Queue example: workers, task_done/join, then cancel the workers."""

    async def main():
        queue = asyncio.Queue()
        delays = [(i % 3 + 1) * 0.01 for i in range(6)]
        for delay in delays:
            queue.put_nowait(delay)
        done = []
        tasks = [asyncio.create_task(_worker(queue, done)) for _ in range(3)]
        await queue.join()
        for task in tasks:
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert all(isinstance(r, asyncio.CancelledError) for r in results), results
        assert sorted(done) == sorted(delays), done

    asyncio.run(main())


def queue_workers_bug():
    """Waits for the queue to be empty (polling), not for the work to be done."""

    async def main():
        queue = asyncio.Queue()
        for _ in range(4):
            queue.put_nowait(0.01)
        done = []
        tasks = [asyncio.create_task(_worker(queue, done)) for _ in range(2)]
        while not queue.empty():
            await asyncio.sleep(0)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        assert len(done) == 4, done

    asyncio.run(main())


def polling_flag():
    """A task polls a flag with ``sleep(0)`` while the one that sets it sleeps: it must end."""

    async def main():
        done = []

        async def work():
            await asyncio.sleep(0.01)
            done.append(1)

        task = asyncio.create_task(work())
        while not done:
            await asyncio.sleep(0)
        await task
        assert done == [1]

    asyncio.run(main())


def clock_poll():
    """A task polls the loop's clock with ``sleep(0)`` until a deadline, with no timer pending: it must end."""

    async def main():
        loop = asyncio.get_running_loop()
        end = loop.time() + 0.05
        rounds = 0
        while loop.time() < end:
            rounds += 1
            await asyncio.sleep(0)
        assert rounds > 0

    asyncio.run(main())


def task_names():
    """Unnamed tasks are Task-1, Task-2, ... as in a fresh interpreter."""

    async def main():
        async def name():
            return asyncio.current_task().get_name()

        names = await asyncio.gather(name(), name())
        return [asyncio.current_task().get_name(), *names]

    names = asyncio.run(main())
    assert names == ["Task-1", "Task-2", "Task-3"], names


async def _slow(delay, value):
    await asyncio.sleep(delay)
    return value


def timeouts():
    """asyncio.timeout, a rescheduled timeout, timeout_at and wait_for."""

    async def main():
        out = []
        try:
            async with asyncio.timeout(0.5):
                await _slow(1.0, "late")
        except TimeoutError:
            out.append("timeout")
        async with asyncio.timeout(None) as scope:
            scope.reschedule(asyncio.get_running_loop().time() + 2.0)
            out.append(await _slow(1.0, "ok"))
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout_at(loop.time() + 0.2):
                await _slow(0.3, "late")
        except TimeoutError:
            out.append("timeout_at")
        try:
            await asyncio.wait_for(asyncio.sleep(1), timeout=0.5)
        except TimeoutError:
            out.append("wait_for")
        out.append(await asyncio.wait_for(_slow(0.1, "in time"), timeout=1))
        return out

    out = asyncio.run(main())
    assert out == ["timeout", "ok", "timeout_at", "wait_for", "in time"], out


def wait_and_as_completed():
    """asyncio.wait (FIRST_COMPLETED, timeout, FIRST_EXCEPTION) and as_completed."""

    async def boom():
        await asyncio.sleep(0.01)
        raise ValueError("boom")

    async def main():
        first, second, third = (asyncio.create_task(_slow(d, v)) for d, v in ((0.1, 1), (0.2, 2), (0.3, 3)))
        done, pending = await asyncio.wait({first, second, third}, return_when=asyncio.FIRST_COMPLETED)
        assert done == {first}, (done, pending)
        done, pending = await asyncio.wait(pending, timeout=0.15)
        assert done == {second} and pending == {third}
        failing = asyncio.create_task(boom())
        done, pending = await asyncio.wait({third, failing}, return_when=asyncio.FIRST_EXCEPTION)
        assert done == {failing} and pending == {third}, (done, pending)
        assert isinstance(failing.exception(), ValueError)
        assert await third == 3
        order = [await c for c in asyncio.as_completed([_slow(0.3, "c"), _slow(0.1, "a"), _slow(0.2, "b")])]
        assert order == ["a", "b", "c"], order
        try:
            for c in asyncio.as_completed([_slow(0.1, "a"), _slow(5, "z")], timeout=1):
                order.append(await c)
        except TimeoutError:
            order.append("timeout")
        assert order[3:] == ["a", "timeout"], order

    asyncio.run(main())


def shield():
    """A shielded inner task survives its outer task's cancellation."""

    async def main():
        log = []

        async def inner():
            await asyncio.sleep(0.2)
            log.append("inner done")
            return 5

        inner_task = asyncio.ensure_future(inner())

        async def outer():
            return await asyncio.shield(inner_task)

        outer_task = asyncio.create_task(outer())
        await asyncio.sleep(0.1)
        outer_task.cancel()
        try:
            await outer_task
        except asyncio.CancelledError:
            log.append("outer cancelled")
        log.append(await inner_task)
        assert log == ["outer cancelled", "inner done", 5], log

    asyncio.run(main())


def barrier():
    """asyncio.Barrier: every party passes after all arrived; abort breaks it."""

    async def main():
        gate = asyncio.Barrier(3)
        seen = []

        async def party(i):
            await asyncio.sleep(0.01 * i)
            seen.append(("before", i))
            position = await gate.wait()
            seen.append(("after", i))
            return position

        positions = await asyncio.gather(*(party(i) for i in range(3)))
        assert sorted(positions) == [0, 1, 2]
        assert all(s[0] == "before" for s in seen[:3]), seen
        await gate.abort()
        try:
            await gate.wait()
        except asyncio.BrokenBarrierError:
            seen.append("broken")
        assert seen[-1] == "broken" and gate.broken

    asyncio.run(main())


def barrier_bug():
    """Three parties expected, two arrive: a deadlock."""

    async def main():
        gate = asyncio.Barrier(3)

        async def party():
            await gate.wait()

        await asyncio.gather(party(), party())

    asyncio.run(main())


def bounded_gather():
    """A Semaphore bounds a gather to two requests at once."""

    async def main():
        limit = asyncio.Semaphore(2)
        active = peak = 0

        async def fetch(i):
            nonlocal active, peak
            async with limit:
                active += 1
                peak = max(peak, active)
                await asyncio.sleep(0.01)
                active -= 1
                return i * i

        results = await asyncio.gather(*(fetch(i) for i in range(6)))
        assert peak <= 2, peak
        assert results == [i * i for i in range(6)]

    asyncio.run(main())


def bounded_gather_bug():
    """The count is taken outside the semaphore: more than two run at once."""

    async def main():
        limit = asyncio.Semaphore(2)
        active = peak = 0

        async def fetch():
            nonlocal active, peak
            async with limit:
                await asyncio.sleep(0)
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.01)
            active -= 1

        await asyncio.gather(*(fetch() for _ in range(4)))
        assert peak <= 2, peak

    asyncio.run(main())


def task_group_failure():
    """A failing task of a TaskGroup cancels its siblings; the error comes out as an ExceptionGroup."""

    async def main():
        log = []

        async def sibling(i):
            try:
                await asyncio.sleep(1)
                log.append(("done", i))
            except asyncio.CancelledError:
                log.append(("cancelled", i))
                raise

        async def failing():
            await asyncio.sleep(0.1)
            raise ValueError("bad")

        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(sibling(1))
                group.create_task(sibling(2))
                group.create_task(failing())
        except* ValueError as errors:
            log.append(("group", len(errors.exceptions)))
        assert sorted(log) == [("cancelled", 1), ("cancelled", 2), ("group", 1)], log

    asyncio.run(main())


request_id = contextvars.ContextVar("request_id", default=None)


def context_vars():
    """Each task runs in a copy of its creator's context."""

    async def handle(i):
        request_id.set(i)
        await asyncio.sleep(0.01 * (3 - i))
        return request_id.get()

    async def main():
        request_id.set("main")
        results = await asyncio.gather(*(handle(i) for i in range(3)))
        assert request_id.get() == "main"
        return results

    assert asyncio.run(main()) == [0, 1, 2]


def _blocking(x):
    time.sleep(0.05)
    return x * 10


def executor_and_tasks():
    """run_in_executor and to_thread mixed with a task."""

    async def main():
        loop = asyncio.get_running_loop()
        return await asyncio.gather(
            loop.run_in_executor(None, _blocking, 1), asyncio.to_thread(_blocking, 2), _slow(0.01, "tick")
        )

    assert asyncio.run(main()) == [10, 20, "tick"]


def condition_wait_for():
    """Two consumers wait_for items a producer adds one at a time."""

    async def main():
        ready = asyncio.Condition()
        items = []

        async def consumer():
            got = []
            for _ in range(2):
                async with ready:
                    await ready.wait_for(lambda: items)
                    got.append(items.pop(0))
            return got

        consumers = [asyncio.create_task(consumer()) for _ in range(2)]
        for i in range(4):
            await asyncio.sleep(0.01)
            async with ready:
                items.append(i)
                ready.notify()
        first, second = await asyncio.gather(*consumers)
        assert sorted(first + second) == [0, 1, 2, 3]

    asyncio.run(main())


def cancel_with_cleanup():
    """A cancelled task awaits its cleanup in ``finally`` before the canceller sees it end."""
    log = []

    async def worker():
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            log.append("cancelled")
            raise
        finally:
            await asyncio.sleep(0.01)
            log.append("cleanup")

    async def main():
        task = asyncio.create_task(worker())
        await asyncio.sleep(0.1)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            log.append("main saw it")
        assert task.cancelled()

    asyncio.run(main())
    assert log == ["cancelled", "cleanup", "main saw it"], log


def from_a_thread():
    """call_soon_threadsafe from a thread completes a future the loop awaits."""

    async def main():
        loop = asyncio.get_running_loop()
        future = loop.create_future()

        def in_thread():
            time.sleep(0.01)
            loop.call_soon_threadsafe(future.set_result, 42)

        thread = threading.Thread(target=in_thread)
        thread.start()
        value = await future
        thread.join()
        return value

    assert asyncio.run(main()) == 42


def loop_in_a_thread():
    """run_coroutine_threadsafe into a loop that runs forever in another thread."""
    loop = asyncio.new_event_loop()
    started = threading.Event()

    def run_loop():
        asyncio.set_event_loop(loop)
        loop.call_soon(started.set)
        loop.run_forever()

    thread = threading.Thread(target=run_loop)
    thread.start()
    started.wait()

    async def add(a, b):
        await asyncio.sleep(0.1)
        return a + b

    value = asyncio.run_coroutine_threadsafe(add(2, 3), loop).result()
    loop.call_soon_threadsafe(loop.stop)
    thread.join()
    loop.close()
    assert value == 5


def runner_and_call_later():
    """asyncio.Runner runs two coroutines on one loop; call_later callbacks fire in time order."""
    out = []

    async def job(x):
        await asyncio.sleep(0.1 * x)
        return x * 2

    async def timers():
        loop = asyncio.get_running_loop()
        loop.call_later(0.2, out.append, "b")
        loop.call_later(0.1, out.append, "a")
        loop.call_later(0.15, out.append, "cancelled").cancel()
        loop.call_soon(out.append, "first")
        await asyncio.sleep(0.3)

    with asyncio.Runner() as runner:
        results = [runner.run(job(1)), runner.run(job(2))]
        runner.run(timers())
        loop = runner.get_loop()
    assert loop.is_closed()
    assert results == [2, 4] and out == ["first", "a", "b"], (results, out)


def lost_update_bug():
    """A read-modify-write across an await: two tasks lose an update."""
    counter = {"n": 0}

    async def increment():
        value = counter["n"]
        await asyncio.sleep(0)
        counter["n"] = value + 1

    async def main():
        await asyncio.gather(increment(), increment())
        assert counter["n"] == 2, counter

    asyncio.run(main())
