"""The controlled ``ray.util.queue``: a FIFO queue that tasks and actors share through an actor.

As in Ray, :class:`Queue` is a handle to a queue actor, so every operation
is an actor call the scheduler orders; it can be passed to tasks and actors.
Ray's queue actor is an async actor on ``asyncio.Queue``; here it is a
threaded actor on the controlled ``queue.Queue``, which blocks and times out
(on virtual time) the same way. ``Empty`` and ``Full`` are Ray's classes,
subclasses of ``queue.Empty`` and ``queue.Full``.
"""

from __future__ import annotations

import queue
from typing import Any, Iterable

from dnsse.frameworks.ray import actor_control, decorators, ref_calls
from dnsse.frameworks.ray.serialization import passed_by_name

__all__ = ["Empty", "Full", "Queue"]

# As many calls at once as Ray's async queue actor serves.
_CONCURRENT_CALLS = 1000


class Empty(queue.Empty):
    pass


class Full(queue.Full):
    pass


class _QueueActor:
    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self.queue: queue.Queue = queue.Queue(maxsize)

    def qsize(self) -> int:
        return self.queue.qsize()

    def empty(self) -> bool:
        return self.queue.empty()

    def full(self) -> bool:
        return self.queue.full()

    def put(self, item: Any, timeout: float | None = None) -> None:
        try:
            self.queue.put(item, timeout=timeout)
        except queue.Full:
            raise Full from None

    def get(self, timeout: float | None = None) -> Any:
        try:
            return self.queue.get(timeout=timeout)
        except queue.Empty:
            raise Empty from None

    def put_nowait(self, item: Any) -> None:
        try:
            self.queue.put_nowait(item)
        except queue.Full:
            raise Full from None

    def put_nowait_batch(self, items: list) -> None:
        if self.maxsize > 0 and len(items) + self.qsize() > self.maxsize:
            raise Full(f"Cannot add {len(items)} items to queue of size {self.qsize()} and maxsize {self.maxsize}.")
        for item in items:
            self.queue.put_nowait(item)

    def get_nowait(self) -> Any:
        try:
            return self.queue.get_nowait()
        except queue.Empty:
            raise Empty from None

    def get_nowait_batch(self, num_items: int) -> list:
        if num_items > self.qsize():
            raise Empty(f"Cannot get {num_items} items from queue of size {self.qsize()}.")
        return [self.queue.get_nowait() for _ in range(num_items)]


# A handle to the queue actor: passed by name, as Ray pickles it.
@passed_by_name
class Queue:
    """``ray.util.queue.Queue(maxsize=0, actor_options=None)``."""

    def __init__(self, maxsize: int = 0, actor_options: dict | None = None) -> None:
        options = {"max_concurrency": _CONCURRENT_CALLS, **(actor_options or {})}
        self.maxsize = maxsize
        self.actor = decorators.remote(_QueueActor).options(**options).remote(maxsize)

    def __len__(self) -> int:
        return self.size()

    def size(self) -> int:
        return ref_calls.get(self.actor.qsize.remote())

    def qsize(self) -> int:
        return self.size()

    def empty(self) -> bool:
        return ref_calls.get(self.actor.empty.remote())

    def full(self) -> bool:
        return ref_calls.get(self.actor.full.remote())

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        if not block:
            self.put_nowait(item)
            return
        if timeout is not None and timeout < 0:
            raise ValueError("'timeout' must be a non-negative number")
        ref_calls.get(self.actor.put.remote(item, timeout))

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        if not block:
            return self.get_nowait()
        if timeout is not None and timeout < 0:
            raise ValueError("'timeout' must be a non-negative number")
        return ref_calls.get(self.actor.get.remote(timeout))

    def put_nowait(self, item: Any) -> None:
        try:
            ref_calls.get(self.actor.put_nowait.remote(item))
        except Full:
            raise Full from None

    def put_nowait_batch(self, items: Iterable) -> None:
        if not isinstance(items, Iterable):
            raise TypeError("Argument 'items' must be an Iterable")
        ref_calls.get(self.actor.put_nowait_batch.remote(list(items)))

    def get_nowait(self) -> Any:
        try:
            return ref_calls.get(self.actor.get_nowait.remote())
        except Empty:
            raise Empty from None

    def get_nowait_batch(self, num_items: int) -> list:
        if not isinstance(num_items, int):
            raise TypeError("Argument 'num_items' must be an int")
        if num_items < 0:
            raise ValueError("'num_items' must be nonnegative")
        return ref_calls.get(self.actor.get_nowait_batch.remote(num_items))

    def shutdown(self, force: bool = False, grace_period_s: int = 5) -> None:
        if self.actor is not None:
            actor_control.kill(self.actor, no_restart=True)
        self.actor = None

