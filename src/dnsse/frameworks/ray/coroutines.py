"""Async actors: coroutines driven step by step, one at a time per actor.

An async actor has one event loop, so only one of its coroutines runs at a
time, and control passes only at an ``await`` that suspends. Here each call's
coroutine is driven by the call's agent, which holds the actor's loop while
it runs; at every await of a controlled awaitable the agent gives the loop
up, blocks until what it awaits is ready and the loop is free, and takes the
loop back. Every such await is a scheduling point where the actor's other
coroutines may run.

Controlled awaitables: an ``ObjectRef`` (``await ref``,
``await actor.method.remote()``), ``asyncio.sleep`` (any delay: a point
where others may run; durations do not order the sleepers),
``asyncio.gather`` of refs and coroutines (each coroutine a child driven on
the same loop), ``asyncio.Lock`` and ``asyncio.Event`` created inside an
async actor, and coroutines awaiting these. Other asyncio machinery (tasks,
futures, queues, ``wait_for``, ``get_running_loop``) does not exist under
control: ``asyncio.create_task`` raises a ``TypeError`` that says so, and so
does awaiting anything else, inside the method that awaits it. Outside async
actors the real asyncio functions run unchanged; there, ``await ref`` waits
as ``ray.get`` does.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Coroutine, Generator

from dnsse.engine.agent import ThreadAgent, Wait
from dnsse.engine.operation import Access, Operation
from dnsse.frameworks.ray.runtime import Worker, WorkerCrash, current_worker

if TYPE_CHECKING:
    from dnsse.frameworks.ray.actor_state import Call
    from dnsse.frameworks.ray.runtime import RayRuntime

RealLock = asyncio.Lock
RealEvent = asyncio.Event
real_sleep = asyncio.sleep
real_gather = asyncio.gather
real_create_task = asyncio.create_task


class Suspend:
    """What a controlled awaitable yields to the driver: when it may go on, and why it waits."""

    __slots__ = ("ready", "describe", "operation")

    def __init__(self, ready: Callable[[], bool], describe: Callable[[], str], operation: Operation) -> None:
        self.ready = ready
        self.describe = describe
        self.operation = operation

    def __await__(self) -> Generator[Suspend, None, None]:
        yield self


def _always() -> bool:
    return True


def drive(agent: ThreadAgent, runtime: RayRuntime, call: Call, coroutine: Coroutine) -> Any:
    """Run ``coroutine`` to its end on its actor's loop; the agent holds the loop on entry."""
    send: Any = None
    throw: BaseException | None = None
    try:
        while True:
            try:
                yielded = coroutine.send(send) if throw is None else coroutine.throw(throw)
            except StopIteration as stop:
                return stop.value
            send, throw = None, None
            if yielded is None:  # a bare ``yield``: asyncio.sleep(0) of the real module
                yielded = Suspend(_always, lambda: "its turn", Operation("await", (), "yield"))
            if not isinstance(yielded, Suspend):
                throw = TypeError(
                    f"{call.label} awaited {yielded!r}, which dnsse cannot drive: an async actor under dnsse "
                    "may await ObjectRefs, asyncio.sleep, asyncio.gather, asyncio.Lock and asyncio.Event "
                    "(and coroutines that await these); rewrite the await with those"
                )
                continue
            try:
                _suspend(agent, runtime, call, yielded)
            except asyncio.CancelledError as cancelled:
                throw = cancelled  # ray.cancel: raised at the await, where the coroutine may catch it
    except BaseException:
        # The worker died or the run is over: the coroutine's ``finally`` blocks
        # run now, not later in the garbage collector on some other thread.
        try:
            coroutine.close()
        except RuntimeError:
            pass  # it awaited again while closing; there is nobody left to drive it
        raise


def _suspend(agent: ThreadAgent, runtime: RayRuntime, call: Call, suspend: Suspend) -> None:
    actor = call.actor
    runtime.checkpoint(agent)
    actor.free_loop(call)
    ready = suspend.ready
    awaited = suspend.operation
    # What runs after the await touches the actor's state, as every other
    # coroutine of the actor does: the step is dependent on theirs.
    operation = Operation(awaited.kind, ((actor.object_name, Access.SYNC), *awaited.objects), awaited.detail)
    runtime.execution.block(
        agent,
        Wait(lambda: call.orphaned() or (actor.loop_free(call) and (call.interrupted() or ready())), suspend.describe),
        operation,
    )
    runtime.checkpoint(agent, faults=False)
    actor.take_loop(call)


def in_async_actor() -> bool:
    return _async_worker() is not None


def _async_worker() -> Worker | None:
    """The worker, when the caller runs in an async actor (its constructor included)."""
    worker = current_worker()
    if worker is None or worker.actor is None or not worker.actor.is_async:
        return None
    return worker


def sleep(delay: float, result: Any = None) -> Awaitable[Any]:
    if _async_worker() is None:
        return real_sleep(delay, result)
    return _sleep(delay, result)


async def _sleep(delay: float, result: Any) -> Any:
    await Suspend(_always, lambda: "its turn after a sleep", Operation("await", (), f"asyncio.sleep({delay:g})"))
    return result


def gather(*awaitables: Any, return_exceptions: bool = False) -> Awaitable[list]:
    context = _async_worker()
    if context is None:
        return real_gather(*awaitables, return_exceptions=return_exceptions)
    return _gather(context, awaitables, return_exceptions)


class _Child:
    """A coroutine given to ``gather``: driven on the same loop by an agent of its own."""

    def __init__(self, worker: Worker, coroutine: Coroutine, index: int) -> None:
        from dnsse.frameworks.ray.runtime import current_runtime

        runtime = current_runtime()
        assert runtime is not None and worker.call is not None
        call = worker.call
        self.done = False
        self.value: Any = None
        self.error: BaseException | None = None
        self.label = f"{call.label}.gather[{index}]"
        actor = call.actor
        agent = ThreadAgent(
            runtime.execution, self.label, lambda: self._run(agent, runtime, call, coroutine), daemon=True
        )
        agent.handle = Worker(caller=worker.caller, label=self.label, actor=actor, call=call, crash=worker.crash)
        agent.pending = Operation("await", ((actor.object_name, Access.SYNC),), self.label)
        agent.waiting = Wait(
            lambda: call.orphaned() or actor.loop_free(call), lambda: f"the event loop of {actor.label}"
        )

    def _run(self, agent: ThreadAgent, runtime: RayRuntime, call: Call, coroutine: Coroutine) -> None:
        try:
            runtime.checkpoint(agent)
            call.actor.take_loop(call)
            self.value = drive(agent, runtime, call, coroutine)
        except WorkerCrash:
            pass  # the parent sees its call orphaned and unwinds
        except Exception as error:  # noqa: BLE001 - gather hands it to the awaiting coroutine
            self.error = error
        finally:
            if not call.orphaned():
                call.actor.free_loop(call)
            self.done = True


async def _gather(worker: Worker, awaitables: tuple, return_exceptions: bool) -> list:
    from dnsse.frameworks.ray.refs import ObjectRef

    children: list[Any] = []
    for index, awaitable in enumerate(awaitables):
        if isinstance(awaitable, ObjectRef):
            children.append(awaitable)
        elif asyncio.iscoroutine(awaitable):
            children.append(_Child(worker, awaitable, index))
        else:
            raise TypeError(f"asyncio.gather under dnsse takes ObjectRefs and coroutines, got {awaitable!r}")

    def finished() -> bool:
        return all(child.ready if isinstance(child, ObjectRef) else child.done for child in children)

    def describe() -> str:
        pending = [c.label() if isinstance(c, ObjectRef) else c.label for c in children
                   if not (c.ready if isinstance(c, ObjectRef) else c.done)]
        return f"asyncio.gather of {', '.join(pending)}"

    await Suspend(finished, describe, Operation("await", (), "asyncio.gather"))
    results: list[Any] = []
    for child in children:
        if isinstance(child, ObjectRef):
            try:
                results.append(child.fetch())
            except Exception as error:  # noqa: BLE001 - as gather does with a failed awaitable
                if not return_exceptions:
                    raise
                results.append(error)
        elif child.error is not None:
            if not return_exceptions:
                raise child.error
            results.append(child.error)
        else:
            results.append(child.value)
    return results


class Lock:
    """``asyncio.Lock`` in an async actor: waiting for it lets the actor's other coroutines run."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if _async_worker() is None:
            return RealLock(*args, **kwargs)
        return super().__new__(cls)

    def __init__(self) -> None:
        self._locked = False
        context = _async_worker()
        owner = context.actor.label if context is not None and context.actor is not None else "an actor"
        self._name = f"an asyncio.Lock of {owner}"

    def locked(self) -> bool:
        return self._locked

    async def acquire(self) -> bool:
        while self._locked:
            await Suspend(lambda: not self._locked, lambda: f"{self._name} to be released",
                          Operation("lock.acquire", (("asyncio-lock", Access.SYNC),), self._name))
        self._locked = True
        return True

    def release(self) -> None:
        if not self._locked:
            raise RuntimeError("Lock is not acquired.")
        self._locked = False

    async def __aenter__(self) -> None:
        await self.acquire()

    async def __aexit__(self, *exc: object) -> None:
        self.release()


class Event:
    """``asyncio.Event`` in an async actor."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if _async_worker() is None:
            return RealEvent(*args, **kwargs)
        return super().__new__(cls)

    def __init__(self) -> None:
        self._set = False

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        self._set = True

    def clear(self) -> None:
        self._set = False

    async def wait(self) -> bool:
        if not self._set:
            await Suspend(lambda: self._set, lambda: "an asyncio.Event to be set",
                          Operation("event.wait", (("asyncio-event", Access.SYNC),), "asyncio.Event"))
        return True


def create_task(coroutine: Coroutine, **kwargs: Any) -> Any:
    if _async_worker() is None:
        return real_create_task(coroutine, **kwargs)
    coroutine.close()
    raise TypeError(
        "asyncio.create_task is not supported in an async actor under dnsse (its coroutines are driven "
        "without a real event loop); await the coroutine, or run several with asyncio.gather"
    )


ASYNCIO_REPLACEMENTS = (
    ("sleep", sleep), ("gather", gather), ("Lock", Lock), ("Event", Event), ("create_task", create_task),
)
