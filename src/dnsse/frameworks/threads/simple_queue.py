"""Controlled ``queue.SimpleQueue``.

CPython's ``SimpleQueue`` is written in C on a real lock, so a ``get`` would
block a controlled thread for real, out of the scheduler's sight.
``concurrent.futures.ThreadPoolExecutor`` feeds its workers through one, which
is why this exists.
"""

from __future__ import annotations

import collections
import queue
import types
from typing import Any

from dnsse.engine.execution import current_agent
from dnsse.engine.operation import Access
from dnsse.frameworks.threads.primitive import Primitive


class SimpleQueue(Primitive):
    kind = "SimpleQueue"

    __class_getitem__ = classmethod(types.GenericAlias)

    def __init__(self) -> None:
        super().__init__()
        self._items: collections.deque[Any] = collections.deque()

    def put(self, item: Any, block: bool = True, timeout: float | None = None) -> None:
        agent = current_agent()
        if agent is None:
            with self._guard:
                self._append(item)
            return
        self._point(agent, "queue.put")
        with self._guard:
            self._append(item)

    def put_nowait(self, item: Any) -> None:
        self.put(item, block=False)

    def get(self, block: bool = True, timeout: float | None = None) -> Any:
        if timeout is not None and timeout < 0:
            raise ValueError("'timeout' must be a non-negative number")
        taken: list[Any] = []

        def try_take() -> bool:
            if not self._items:
                return False
            taken.append(self._items.popleft())
            return True

        if not self._acquire("queue.get", lambda: bool(self._items), try_take, self._describe, block, timeout):
            raise queue.Empty
        return taken[0]

    def get_nowait(self) -> Any:
        return self.get(block=False)

    def empty(self) -> bool:
        self._observe()
        return not self._items

    def qsize(self) -> int:
        self._observe()
        return len(self._items)

    def _observe(self) -> None:
        agent = current_agent()
        if agent is not None:
            self._point(agent, "queue.size", Access.READ)

    def _append(self, item: Any) -> None:
        self._items.append(item)
        self._wake_uncontrolled()

    def _describe(self) -> str:
        return f"an item in {self._label}"
