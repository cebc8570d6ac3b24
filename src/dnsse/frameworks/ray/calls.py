"""Running one actor call in its agent: start rule, attempts, retries, the result.

Fault points of a call (where its actor declares ``max_restarts``): when it
starts, at every Ray call inside it, and when it returns,
before its result is stored, which is where a retry makes a method run twice.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from typing import Any

from dnsse.engine.agent import ThreadAgent, Wait
from dnsse.engine.operation import Access, Operation
from dnsse.engine.value_text import value_text
from dnsse.frameworks.ray.actor_state import DEAD, EXITED, TERMINATE, ActorExit, Call, crash_of, terminate
from dnsse.frameworks.ray.coroutines import run_async_call
from dnsse.frameworks.ray.errors import TaskCancelledError
from dnsse.frameworks.ray.refs import failed_dependency, resolve
from dnsse.frameworks.ray.results import store_error, store_value, task_error
from dnsse.frameworks.ray.runtime import RayRuntime, Worker, WorkerCrash
from dnsse.frameworks.ray.serialization import copy_value
from dnsse.frameworks.ray.streaming import produce, produce_all, streamed, yielded_returns
from dnsse.frameworks.threads.shared_state import traced

_LOST = object()


def start_call(runtime: RayRuntime, call: Call) -> ThreadAgent:
    """Create the agent of ``call``; it waits until its actor lets it start."""
    actor = call.actor
    agent = ThreadAgent(runtime.execution, call.label, lambda: _run(runtime, agent, call), daemon=True)
    call.worker = Worker(caller=actor.label, label=call.label, actor=actor, call=call, crash=crash_of(actor),
                         agent_id=agent.id)
    agent.handle = call.worker
    for ref in call.refs:
        ref.canceller = call.cancel
    agent.pending = _start_operation(call)
    # Partials, not lambdas: the scheduler tests the start rule at every step while the call waits.
    agent.waiting = Wait(functools.partial(actor.may_start, call), functools.partial(actor.why_waiting, call))
    return agent


def _start_operation(call: Call) -> Operation:
    touched: tuple[tuple[str, Access], ...] = ((call.actor.object_name, Access.SYNC),)
    if call.dependencies:
        touched += tuple([(ref.object_name, Access.READ) for ref in call.dependencies])
    # Its results too: a call not yet started is what may fill them first (see tasks, task.start).
    touched += tuple([(ref.object_name, Access.WRITE) for ref in call.refs])
    return Operation("actor.call", touched, call.label)


def _run(runtime: RayRuntime, agent: ThreadAgent, call: Call) -> None:
    actor = call.actor
    execution = runtime.execution
    fields = {"actor": actor.label, "method": call.method}
    while True:
        if call.cancelled:
            store_error(call.refs, TaskCancelledError(f"{call.label} was cancelled before it started"))
            actor.finish(call)
            return
        if actor.state == DEAD:
            store_error(call.refs, call.lost_error())
            actor.finish(call)
            return
        failed = failed_dependency(call.dependencies)
        if failed is not None:
            store_error(call.refs, failed)
            actor.finish(call)
            return
        actor.begin(call)
        execution.emit(agent, "actor.call.start", fields)
        outcome = _attempt(runtime, agent, call)
        if outcome is _LOST:
            actor.end(call)
            if actor.state != DEAD and call.retries_left != 0:
                if call.retries_left > 0:
                    call.retries_left -= 1
                execution.emit(agent, "actor.call.retry", fields)
                execution.block(agent, Wait(functools.partial(actor.may_start, call),
                                            functools.partial(actor.why_waiting, call)), _start_operation(call))
                continue
            store_error(call.refs, call.lost_error())
        actor.finish(call)
        ended = fields if call.returned is None else {**fields, "returned": call.returned}
        execution.emit(agent, "actor.call.end", ended)
        return


def _attempt(runtime: RayRuntime, agent: ThreadAgent, call: Call) -> object:
    """Run the method once; store its result, or return ``_LOST`` when the actor died under it."""
    actor = call.actor
    execution = runtime.execution
    try:
        runtime.checkpoint(agent)
        args, kwargs = resolve(copy_value(call.args), copy_value(call.kwargs), call.dependencies)
        method = terminate if call.method == TERMINATE else getattr(actor.instance, call.method)
        if actor.parallel:
            # Calls that may run at once share the instance: their reads and writes of it are scheduling points.
            with traced(agent, runtime.plan):
                value = _call_method(runtime, agent, call, method, args, kwargs)
        else:
            value = _call_method(runtime, agent, call, method, args, kwargs)
        runtime.checkpoint(agent)
    except WorkerCrash:
        return _LOST
    except ActorExit:
        # Ray ends the actor's process: this call and every later one fail with ActorDiedError.
        actor.die(f"the actor is dead because {EXITED}")
        return _LOST
    except SystemExit as exit:
        if exit.code == 0:
            # Ray reads sys.exit(0) as an intended exit: the actor dies for good, the call with it (checked
            # against Ray 2.60).
            actor.die("the actor is dead because its worker process exited on purpose (sys.exit(0))")
            return _LOST
        # Any other status, sys.exit() included, is an unexpected exit of the worker for Ray: a crash, the
        # actor restarted and the call retried as os._exit's (Ray's checkpointing example relies on it).
        actor.process_exited(f"its worker process exited (sys.exit({exit.code!r}))")
        return _LOST
    except asyncio.CancelledError:
        store_error(call.refs, TaskCancelledError(f"{call.label} was cancelled while it ran"))
        return None
    except Exception as error:  # noqa: BLE001 - a method's error goes to whoever gets its result
        if call.orphaned():
            return _LOST
        where = actor.process.label if actor.process is not None else ""
        store_error(call.refs, task_error(f"{actor.cls.__qualname__}.{call.method}", error, execution.source_files,
                                          where))
        return None
    # Ending frees the actor for its next call, and fills the result refs.
    refs = call.refs
    if len(refs) == 1:
        writes: tuple[tuple[str, Access], ...] = ((actor.object_name, Access.SYNC), (refs[0].object_name, Access.WRITE))
    else:
        writes = ((actor.object_name, Access.SYNC), *[(ref.object_name, Access.WRITE) for ref in refs])
    execution.yield_point(agent, Operation("actor.call.end", writes, call.label))
    if call.orphaned():
        return _LOST
    if call.cancel_requested:
        # Ray reports a cancelled call as cancelled, whatever it returned.
        store_error(call.refs, TaskCancelledError(f"{call.label} was cancelled while it ran"))
        return None
    store_value(call.refs, value, f"{actor.cls.__qualname__}.{call.method}")
    call.returned = value_text(value)
    return None


def _call_method(runtime: RayRuntime, agent: ThreadAgent, call: Call, method: Any, args: tuple, kwargs: dict) -> Any:
    """What the method returns (a streaming call's, once its stream is produced)."""
    if call.actor.is_async:
        if call.stream is not None and inspect.isasyncgenfunction(method):
            # Its values fill the stream's refs as the method yields them, on the actor's loop.
            return run_async_call(runtime, agent, call, streamed(runtime, call.stream, method), args, kwargs)
        value = run_async_call(runtime, agent, call, method, args, kwargs)
    else:
        value = method(*args, **kwargs)
    if call.stream is not None:
        value = produce(runtime, agent, call.stream, value)
    elif call.dynamic:
        actor = call.actor
        value = produce_all(runtime, agent, call.label, value, lambda error: task_error(
            f"{actor.cls.__qualname__}.{call.method}", error, runtime.execution.source_files,
            actor.process.label if actor.process is not None else ""))
    elif inspect.isgenerator(value):
        value = yielded_returns(runtime, agent, value, len(call.refs))
    return value
