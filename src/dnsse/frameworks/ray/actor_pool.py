"""The controlled ``ray.util.ActorPool``: work spread over a fixed set of actors.

Built on the controlled ``ray.wait`` and ``ray.get``, so its behaviour is
the scheduler's to explore. Values submitted while no actor is idle wait in
the pool, unsubmitted, until a result is taken and its actor is free again:
the pool can starve when running calls wait for calls still held back.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from dnsse.frameworks.ray.errors import ActorDiedError, GetTimeoutError


class ActorPool:
    def __init__(self, actors: list) -> None:
        self._idle = list(actors)
        self._owner: dict[Any, Any] = {}  # future -> (index, actor)
        self._by_index: dict[int, Any] = {}
        self._next_index = 0
        self._next_return = 0
        self._backlog: list[tuple[Callable, Any]] = []

    def submit(self, fn: Callable[[Any, Any], Any], value: Any) -> None:
        if not self._idle:
            self._backlog.append((fn, value))
            return
        actor = self._idle.pop()
        future = fn(actor, value)
        self._owner[future] = (self._next_index, actor)
        self._by_index[self._next_index] = future
        self._next_index += 1

    def has_next(self) -> bool:
        return bool(self._owner)

    def has_free(self) -> bool:
        return bool(self._idle) and not self._backlog

    def get_next(self, timeout: float | None = None, ignore_if_timedout: bool = False) -> Any:
        """The next result in submission order."""
        from dnsse.frameworks.ray import api

        if not self.has_next():
            raise StopIteration("No more results to get")
        if self._next_return >= self._next_index or self._next_return not in self._by_index:
            raise ValueError("It is not allowed to call get_next() after get_next_unordered().")
        future = self._by_index[self._next_return]
        if timeout is not None:
            ready, _ = api.wait([future], timeout=timeout)
            if not ready:
                if ignore_if_timedout:
                    del self._by_index[self._next_return]
                    self._next_return += 1
                    self._forget(future)
                raise GetTimeoutError("Timed out waiting for result")
        del self._by_index[self._next_return]
        self._next_return += 1
        return self._take(future)

    def get_next_unordered(self, timeout: float | None = None, ignore_if_timedout: bool = False) -> Any:
        """Whichever result is ready first."""
        from dnsse.frameworks.ray import api

        if not self.has_next():
            raise StopIteration("No more results to get")
        ready, _ = api.wait(list(self._owner), num_returns=1, timeout=timeout)
        if not ready:
            raise GetTimeoutError("Timed out waiting for result")
        future = ready[0]
        index = self._owner[future][0]
        del self._by_index[index]
        self._next_return = max(self._next_return, index + 1)
        return self._take(future)

    def map(self, fn: Callable[[Any, Any], Any], values: list) -> Iterator[Any]:
        self._drain()
        for value in values:
            self.submit(fn, value)
        while self.has_next():
            yield self.get_next()

    def map_unordered(self, fn: Callable[[Any, Any], Any], values: list) -> Iterator[Any]:
        self._drain()
        for value in values:
            self.submit(fn, value)
        while self.has_next():
            yield self.get_next_unordered()

    def pop_idle(self) -> Any:
        return self._idle.pop() if self.has_free() else None

    def push(self, actor: Any) -> None:
        busy = [a for _, a in self._owner.values()]
        if actor in self._idle or actor in busy:
            raise ValueError("Actor already belongs to current ActorPool")
        self._return(actor)

    def _take(self, future: Any) -> Any:
        """The result of ``future``; its actor goes back to the pool only after the result is in."""
        from dnsse.frameworks.ray import api

        _, actor = self._owner.pop(future)
        alive = True
        try:
            return api.get(future)
        except ActorDiedError:
            alive = False  # a dead actor would be picked again and again
            raise
        finally:
            self._return(actor, alive)

    def _forget(self, future: Any) -> None:
        _, actor = self._owner.pop(future)
        self._return(actor)

    def _return(self, actor: Any, alive: bool = True) -> None:
        if alive:
            self._idle.append(actor)
        if self._backlog and self._idle:
            self.submit(*self._backlog.pop(0))

    def _drain(self) -> None:
        # A new map starts after the results of the previous one are consumed.
        while self.has_next():
            self.get_next_unordered()
