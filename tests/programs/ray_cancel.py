"""ray.cancel of tasks and actor calls."""

import asyncio

import ray
from ray.exceptions import TaskCancelledError
from ray.util.queue import Queue


@ray.remote
class Signal:
    def __init__(self):
        self.ready = False

    def send(self):
        self.ready = True

    def is_set(self):
        return self.ready


@ray.remote
def wait_forever(signal):
    while not ray.get(signal.is_set.remote()):
        pass
    return "finished"


def cancel_a_blocked_task():
    signal = Signal.remote()
    ref = wait_forever.remote(signal)
    ray.cancel(ref)
    try:
        ray.get(ref)
    except TaskCancelledError:
        return
    raise AssertionError("a cancelled task returned a value")


@ray.remote
class AsyncWorker:
    def __init__(self):
        self.started = False
        self.never = asyncio.Event()

    async def wait(self):
        self.started = True
        try:
            await self.never.wait()
        except asyncio.CancelledError:
            return "caught"
        return "woken"

    async def has_started(self):
        return self.started


def cancel_a_queued_or_running_async_call():
    worker = AsyncWorker.remote()
    ref = worker.wait.remote()
    ray.cancel(ref)
    try:
        ray.get(ref)
    except TaskCancelledError:
        return  # queued: never ran; running: cancelled at its await, and reported so though it caught it
    raise AssertionError("a cancelled call returned a value")


def cancel_a_running_async_call():
    worker = AsyncWorker.remote()
    ref = worker.wait.remote()
    while not ray.get(worker.has_started.remote()):
        pass
    ray.cancel(ref)
    try:
        ray.get(ref)
    except TaskCancelledError:
        return  # as Ray 2.60 reports it, although the coroutine caught CancelledError and returned
    raise AssertionError("a cancelled call returned a value")


@ray.remote
def quick(x):
    return x


def cancelled_result_used_anyway():
    """The bug: a result is read after its task was cancelled, which works only if it already ran."""
    ref = quick.remote(1)
    ray.cancel(ref)
    assert ray.get(ref) == 1


@ray.remote
class EventSignal:
    """Ray's docs' SignalActor: wait() blocks until send()."""

    def __init__(self):
        self.event = asyncio.Event()

    async def send(self):
        self.event.set()

    async def wait(self):
        await self.event.wait()


@ray.remote
def blocked_child(signal):
    ray.get(signal.wait.remote())
    return "child finished"


@ray.remote
def parent_of_a_blocked_child(signal, queue):
    child = blocked_child.remote(signal)
    queue.put([child])
    return ray.get(child)


def _cancel_parent(recursive: bool) -> None:
    ray.init()
    signal = EventSignal.remote()
    queue = Queue()
    parent = parent_of_a_blocked_child.remote(signal, queue)
    [child] = queue.get()
    ray.cancel(parent, recursive=recursive)
    try:
        ray.get(child)
        raise AssertionError("the child was not cancelled")
    except TaskCancelledError:
        pass
    ray.shutdown()


def cancel_reaches_the_child() -> None:
    """recursive=True (the default) cancels the task the cancelled task submitted."""
    _cancel_parent(recursive=True)


def cancel_leaves_the_child() -> None:
    """recursive=False leaves the child waiting for a signal never sent: the driver deadlocks."""
    _cancel_parent(recursive=False)
