"""Async actors: each concurrency group of an async actor runs a controlled event loop.

As in Ray, an async actor runs its coroutines on an event loop of its own,
one per concurrency group. Here each is a
:class:`~dnsse.frameworks.threads.event_loop.ControlledLoop` run by an agent
of the actor, so all of asyncio works inside async actors (``create_task``,
``gather``, ``wait_for``, ``Queue``, ``Lock``, ``Condition``, ...), every
asyncio task is an agent, and control passes between the actor's coroutines
only at an ``await`` that suspends. A call's agent hands its coroutine to the
loop as a task and waits for it; a synchronous method of an async actor runs
on the loop too, blocking it, as in Ray.

``await ref`` on a controlled loop waits without blocking the loop (the
loop completes a future once the ref is ready); where no controlled loop
runs, it waits as ``ray.get`` does. A crash or kill abandons the actor's
loops: their coroutines never run again.
"""

from __future__ import annotations

import inspect
from asyncio import events
from typing import TYPE_CHECKING, Any, Callable

from dnsse.engine.agent import ThreadAgent
from dnsse.engine.execution import current_agent
from dnsse.frameworks.ray.runtime import Worker
from dnsse.frameworks.threads.event_loop import ControlledLoop

if TYPE_CHECKING:
    from dnsse.frameworks.ray.actor_state import Actor, Call
    from dnsse.frameworks.ray.runtime import RayRuntime


def running_controlled_loop() -> ControlledLoop | None:
    loop = events._get_running_loop()
    return loop if isinstance(loop, ControlledLoop) else None


def run_async_call(runtime: RayRuntime, agent: ThreadAgent, call: Call, method: Callable, args: tuple,
                   kwargs: dict) -> Any:
    """Run one call of an async actor on its group's loop; its value, or its exception raised."""
    loop = _actor_loop(runtime, call.actor, call.group)
    if not inspect.iscoroutinefunction(method):
        return loop.run_exclusive(agent, lambda: method(*args, **kwargs))
    # The call's agent takes its coroutine's steps itself.
    task = call.task = loop.adopted_task(agent, method(*args, **kwargs))
    loop.take_steps(agent, task)
    runtime.checkpoint(agent, faults=False)
    return task.result()


def _actor_loop(runtime: RayRuntime, actor: Actor, group: str) -> ControlledLoop:
    loop = actor.loops.get(group)
    if loop is not None:
        return loop
    label = f"{actor.label} event loop" + ("" if group == actor.default_group else f" ({group})")
    owner = ThreadAgent(runtime.execution, label, lambda: loop.run_forever(), daemon=True)
    owner.handle = Worker(caller=actor.label, label=label, actor=actor, machinery=True)
    # Coroutines of different groups run in different threads, at once: trace them then.
    loop = ControlledLoop(owner, on_task_agent=lambda task_agent, task: _adopt(runtime, actor, task_agent),
                          plan=runtime.plan if actor.parallel else None)
    actor.loops[group] = loop
    return loop


def _adopt(runtime: RayRuntime, actor: Actor, task_agent: ThreadAgent) -> None:
    """A task's agent works for the actor, and for the call whose coroutine created it."""
    from dnsse.frameworks.ray.actor_state import crash_of

    creator = current_agent()
    parent = runtime.worker_of(creator) if creator is not None else None
    call = parent.call if parent is not None and parent.actor is actor else None
    # What the task submits is the call's child too: a recursive cancel of the call reaches it.
    children = parent.children if call is not None and parent is not None else []
    task_agent.handle = Worker(caller=actor.label, label=task_agent.name, actor=actor, call=call,
                               crash=crash_of(actor), children=children, agent_id=task_agent.id)
    if call is not None and call.worker is not None:
        call.worker.related.append(task_agent.handle)  # a cancel of the call lands in its coroutines

