"""The signal actor of Ray's test suite and patterns: an async actor whose ``wait`` blocks tasks until ``send``.

``run`` starts tasks that each wait for the signal, checks none finished
before it was sent, sends it and collects them. ``run_counting_waiters``
asserts that all tasks are already waiting when the driver asks, an order
Ray does not promise: a task may not have reached ``signal.wait`` yet.
"""

import asyncio

import ray


@ray.remote(num_cpus=0)
class SignalActor:
    def __init__(self):
        self.ready_event = asyncio.Event()
        self.num_waiters = 0

    def send(self, clear=False):
        self.ready_event.set()
        if clear:
            self.ready_event.clear()

    async def wait(self, should_wait=True):
        if should_wait:
            self.num_waiters += 1
            await self.ready_event.wait()
            self.num_waiters -= 1

    async def cur_num_waiters(self):
        return self.num_waiters


@ray.remote
def wait_and_go(signal, i):
    ray.get(signal.wait.remote())
    return i


def run() -> list:
    ray.init(ignore_reinit_error=True)
    signal = SignalActor.remote()
    tasks = [wait_and_go.remote(signal, i) for i in range(3)]
    ready, _ = ray.wait(tasks, timeout=0)
    assert ready == [], "a task finished before the signal was sent"
    ray.get(signal.send.remote())
    results = ray.get(tasks)
    assert results == [0, 1, 2], results
    return results


def run_counting_waiters() -> list:
    ray.init(ignore_reinit_error=True)
    signal = SignalActor.remote()
    tasks = [wait_and_go.remote(signal, i) for i in range(3)]
    waiting = ray.get(signal.cur_num_waiters.remote())
    assert waiting == 3, f"only {waiting} of 3 tasks wait for the signal"
    ray.get(signal.send.remote())
    return ray.get(tasks)
