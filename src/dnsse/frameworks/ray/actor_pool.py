"""The controlled ``ray.util.ActorPool``: work spread over a fixed set of actors.

Built on the controlled ``ray.wait`` and ``ray.get``, so its behaviour is
the scheduler's to explore, and written as Ray writes it: ``map`` and
``map_unordered`` submit every value at once (values beyond the idle actors
wait in the pool, unsubmitted, until a result is taken and its actor is free
again) and return an iterator over the results; a call with
``num_returns > 1`` gives a list of refs, kept under its tuple, and its
result is the list of values. The pool can starve when running calls wait
for calls still held back.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from dnsse.frameworks.ray import ref_calls
from dnsse.frameworks.ray.errors import ActorDiedError, GetTimeoutError
from dnsse.frameworks.ray.refs import ObjectRef


def _key(future: Any) -> Any:
    return tuple(future) if isinstance(future, list) else future


def _refs(key: Any) -> list[ObjectRef]:
    return list(key) if isinstance(key, tuple) else [key]


class ActorPool:
    def __init__(self, actors: list) -> None:
        self._idle_actors = list(actors)
        self._future_to_actor: dict[Any, tuple[int, Any]] = {}
        self._index_to_future: dict[int, Any] = {}
        self._next_task_index = 0
        self._next_return_index = 0
        self._pending_submits: list[tuple[Callable, Any]] = []

    def map(self, fn: Callable[[Any, Any], Any], values: Any) -> Iterator[Any]:
        """Submit ``fn(actor, value)`` for every value now; iterate the results in order."""
        while self.has_next():
            try:
                self.get_next(timeout=0, ignore_if_timedout=True)
            except TimeoutError:
                pass
        for value in values:
            self.submit(fn, value)

        def results() -> Iterator[Any]:
            while self.has_next():
                yield self.get_next()

        return results()

    def map_unordered(self, fn: Callable[[Any, Any], Any], values: Any) -> Iterator[Any]:
        """As ``map``, with the results in the order they are ready."""
        while self.has_next():
            try:
                self.get_next_unordered(timeout=0)
            except TimeoutError:
                pass
        for value in values:
            self.submit(fn, value)

        def results() -> Iterator[Any]:
            while self.has_next():
                yield self.get_next_unordered()

        return results()

    def submit(self, fn: Callable[[Any, Any], Any], value: Any) -> None:
        if not self._idle_actors:
            self._pending_submits.append((fn, value))
            return
        actor = self._idle_actors.pop()
        future = fn(actor, value)
        self._future_to_actor[_key(future)] = (self._next_task_index, actor)
        self._index_to_future[self._next_task_index] = future
        self._next_task_index += 1

    def has_next(self) -> bool:
        return bool(self._future_to_actor)

    def has_free(self) -> bool:
        return bool(self._idle_actors) and not self._pending_submits

    def get_next(self, timeout: float | None = None, ignore_if_timedout: bool = False) -> Any:
        """The next result in submission order."""
        if not self.has_next():
            raise StopIteration("No more results to get")
        if self._next_return_index >= self._next_task_index:
            raise ValueError("It is not allowed to call get_next() after get_next_unordered().")
        future = self._index_to_future[self._next_return_index]
        timed_out = False
        if timeout is not None:
            ready, _ = ref_calls.wait(_refs(_key(future)), num_returns=len(_refs(_key(future))), timeout=timeout)
            if len(ready) < len(_refs(_key(future))):
                if not ignore_if_timedout:
                    raise GetTimeoutError("Timed out waiting for result")
                timed_out = True
        del self._index_to_future[self._next_return_index]
        self._next_return_index += 1
        _, actor = self._future_to_actor.pop(_key(future))
        if timed_out:
            self._return_actor(actor)
            raise GetTimeoutError(f"Timed out waiting for result. The task {future} has been ignored.")
        return self._get_result(future, actor)

    def get_next_unordered(self, timeout: float | None = None, ignore_if_timedout: bool = False) -> Any:
        """Whichever result is ready first."""
        if not self.has_next():
            raise StopIteration("No more results to get")
        # A call with several returns is ready when its first ref is (its refs are filled together).
        firsts = {_refs(key)[0]: key for key in self._future_to_actor}
        ready, _ = ref_calls.wait(list(firsts), num_returns=1, timeout=timeout)
        if ready:
            key = firsts[ready[0]]
        elif not ignore_if_timedout:
            raise GetTimeoutError("Timed out waiting for result")
        else:
            key = next(iter(self._future_to_actor))
        index, actor = self._future_to_actor.pop(key)
        future = self._index_to_future.pop(index)
        self._next_return_index = max(self._next_return_index, index + 1)
        if not ready:
            self._return_actor(actor)
            raise GetTimeoutError(f"Timed out waiting for result. The task {future} has been ignored.")
        return self._get_result(future, actor)

    def pop_idle(self) -> Any:
        return self._idle_actors.pop() if self.has_free() else None

    def push(self, actor: Any) -> None:
        busy = [a for _, a in self._future_to_actor.values()]
        if actor in self._idle_actors or actor in busy:
            raise ValueError("Actor already belongs to current ActorPool")
        self._return_actor(actor)

    def _get_result(self, future: Any, actor: Any) -> Any:
        """The result of ``future``; its actor goes back to the pool only after the result is in."""
        alive = True
        try:
            return ref_calls.get(future)
        except ActorDiedError:
            alive = False  # a dead actor would be picked again and again
            raise
        finally:
            self._return_actor(actor, alive)

    def _return_actor(self, actor: Any, alive: bool = True) -> None:
        if alive:
            self._idle_actors.append(actor)
        if self._pending_submits and self._idle_actors:
            self.submit(*self._pending_submits.pop(0))
