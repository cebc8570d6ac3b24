"""Streaming generators: a task or actor method that yields values one at a time.

A generator function (or ``num_returns="streaming"``) returns an
:class:`ObjectRefGenerator` at once; iterating it gives one ObjectRef per
yielded value, blocking until the worker has produced the next one, as in
Ray. Every ``yield`` in the worker is a scheduling point that fills a new
ref. When the generator raises, the next ref the consumer gets holds the
error (``ray.get`` raises it) and the iteration ends; ``completed()`` is a
ref that is ready when the generator has finished.

A generator function with an int ``num_returns`` returns what it yields,
one value per ref. ``num_returns="dynamic"`` (deprecated in Ray, still served by 2.60) runs
the generator to its end; the call's one ref then holds a
:class:`DynamicObjectRefGenerator` of one ref per yielded value.
"""

from __future__ import annotations

import inspect
from typing import Any, AsyncGenerator, Callable, Generator, Iterator

from dnsse.engine.agent import ThreadAgent
from dnsse.engine.execution import current_agent
from dnsse.engine.operation import Access, Operation
from dnsse.frameworks.ray.coroutines import running_controlled_loop
from dnsse.frameworks.ray.refs import ObjectRef
from dnsse.frameworks.ray.runtime import RayRuntime, controlled
from dnsse.frameworks.ray.serialization import passed_by_name
from dnsse.frameworks.threads.primitive import block_until

STREAMING = "streaming"
DYNAMIC = "dynamic"


def is_streaming(num_returns: object, function: Callable) -> bool:
    """Whether a call streams: declared so, or a generator function (an async one too) with ``num_returns`` unset."""
    generates = inspect.isgeneratorfunction(function) or inspect.isasyncgenfunction(function)
    return num_returns == STREAMING or (num_returns is None and generates)


@passed_by_name
class ObjectRefGenerator:
    """What a streaming call returns: an iterator of ObjectRefs, one per yielded value."""

    def __init__(self, completion: ObjectRef) -> None:
        self._completion = completion
        self._produced: list[ObjectRef] = []
        self._next = 0
        self._error_given = False

    def __iter__(self) -> Iterator[ObjectRef]:
        return self

    def __next__(self) -> ObjectRef:
        agent, runtime = controlled("next() of an ObjectRefGenerator")
        runtime.checkpoint(agent)
        block_until(agent, self._operation(), self._has_next, self._describe, None)
        runtime.checkpoint(agent, faults=False)
        return self._take()

    def __aiter__(self) -> ObjectRefGenerator:
        return self

    def __anext__(self) -> Any:
        return self._anext()

    async def _anext(self) -> ObjectRef:
        loop = running_controlled_loop()
        if loop is None:
            try:
                return next(self)
            except StopIteration:
                raise StopAsyncIteration from None
        await loop.watch(self._has_next)
        try:
            return self._take()
        except StopIteration:
            raise StopAsyncIteration from None

    def completed(self) -> ObjectRef:
        return self._completion

    def is_finished(self) -> bool:
        return self._completion.ready and self._next >= len(self._produced)

    def has_next(self) -> bool:
        """Whether ``next()`` would not block: its next ref is produced, or the generator ended (``ray.wait``)."""
        return self._has_next()

    def _has_next(self) -> bool:
        return self._next < len(self._produced) or self._completion.ready

    def _take(self) -> ObjectRef:
        if self._next < len(self._produced):
            ref = self._produced[self._next]
            self._next += 1
            return ref
        if self._completion.error() is not None and not self._error_given:
            self._error_given = True
            return self._completion
        raise StopIteration

    def _operation(self) -> Operation:
        return Operation("ray.stream.next", ((self._completion.object_name, Access.READ),), self._completion.source)

    def _describe(self) -> str:
        return f"the next value of the streaming {self._completion.source}"

    def __repr__(self) -> str:
        return f"ObjectRefGenerator({self._completion.source})"


def produce(runtime: RayRuntime, agent: ThreadAgent, stream: ObjectRefGenerator, generator: Generator) -> Any:
    """Run a streaming call's generator, filling one ref per yield; its return value at the end."""
    completion = stream.completed()
    if not inspect.isgenerator(generator):
        raise TypeError(f"{completion.source} declares num_returns='streaming' but returned "
                        f"{type(generator).__name__}, not a generator")
    try:
        while True:
            try:
                item = next(generator)
            except StopIteration as stop:
                return stop.value
            _yielded(runtime, agent, stream, item)
    finally:
        generator.close()


def streamed(runtime: RayRuntime, stream: ObjectRefGenerator, method: Callable[..., AsyncGenerator]) -> Callable:
    """An async generator method of an async actor, as the coroutine its call runs on the actor's loop.

    Ray streams such a method as it does a generator: each value it yields
    fills the stream's next ref (a scheduling point) while the method goes on
    at its next ``await``, between the actor's other coroutines.
    """

    async def stream_values(*args: Any, **kwargs: Any) -> None:
        generator = method(*args, **kwargs)
        try:
            async for item in generator:
                agent = current_agent()
                assert agent is not None
                _yielded(runtime, agent, stream, item)
        finally:
            await generator.aclose()

    return stream_values


def _yielded(runtime: RayRuntime, agent: ThreadAgent, stream: ObjectRefGenerator, item: object) -> None:
    """One value the generator yielded: the stream's next ref, filled at a scheduling point."""
    completion = stream.completed()
    runtime.checkpoint(agent)
    ref = ObjectRef(runtime.next_ref_number(), f"{completion.source}[{len(stream._produced)}]")
    operation = Operation("task.yield", ((ref.object_name, Access.WRITE), (completion.object_name, Access.WRITE)),
                          ref.label())
    runtime.execution.yield_point(agent, operation)
    ref.fill(item)
    stream._produced.append(ref)


@passed_by_name
class DynamicObjectRefGenerator:
    """What ``ray.get`` of a ``num_returns="dynamic"`` call's ref gives: the refs of the values it yielded."""

    def __init__(self, refs: list[ObjectRef]) -> None:
        self._refs = refs

    def __iter__(self) -> Iterator[ObjectRef]:
        return iter(self._refs)

    def __len__(self) -> int:
        return len(self._refs)

    def __repr__(self) -> str:
        return f"DynamicObjectRefGenerator({len(self._refs)} refs)"


def produce_all(runtime: RayRuntime, agent: ThreadAgent, source: str, generator: Generator,
                failed: Callable[[Exception], BaseException]) -> DynamicObjectRefGenerator:
    """Run a ``num_returns="dynamic"`` call's generator to its end, one ref per yielded value.

    An exception the generator raises does not fail the call, as in Ray: its
    last ref holds the error (``failed`` makes it), after the values yielded before it.
    """
    if not inspect.isgenerator(generator):
        raise TypeError(f"{source} declares num_returns='dynamic' but returned {type(generator).__name__}, "
                        "not a generator")
    refs: list[ObjectRef] = []
    try:
        while True:
            try:
                item = next(generator)
            except StopIteration:
                break
            except Exception as error:  # noqa: BLE001 - the generator's error goes to its last ref
                ref = ObjectRef(runtime.next_ref_number(), f"{source}[{len(refs)}]")
                ref.fail(failed(error))
                refs.append(ref)
                break
            runtime.checkpoint(agent)
            ref = ObjectRef(runtime.next_ref_number(), f"{source}[{len(refs)}]")
            ref.fill(item)
            refs.append(ref)
    finally:
        generator.close()
    return DynamicObjectRefGenerator(refs)


def yielded_returns(runtime: RayRuntime, agent: ThreadAgent, generator: Generator, count: int) -> Any:
    """A generator with a fixed ``num_returns``: its yielded values are its returns (Ray's pattern
    "using generators to reduce heap memory usage"); another count than declared fails the task, as in Ray."""
    values = []
    try:
        for item in generator:
            runtime.checkpoint(agent)
            values.append(item)
    finally:
        generator.close()
    if len(values) != count:
        raise ValueError(f"Task returned {len(values)} objects, but num_returns={count}.")
    return values[0] if count == 1 else tuple(values)
