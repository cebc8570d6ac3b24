"""``ray.get_runtime_context()``: who is running, as the calling task or actor sees it.

Answers as Ray 2.60 does (measured): in the driver ``get_task_id()`` and
``get_actor_id()`` are None and ``is_canceled()`` raises; in a task the task
id is set; in an actor the actor's id and name, and ``current_actor``;
``is_canceled()`` says whether ``ray.cancel`` reached the running task or
call (a sync or threaded actor's call sees it here: Ray does not interrupt
it), and raises in an async actor, whose calls are cancelled through
asyncio. ``is_canceled()`` is a scheduling point, so a call that polls it
lets the canceller run. IDs are hex strings fixed by the names of the
task, actor and group, so they are the same in every execution. Other
methods are refused, naming them.
"""

from __future__ import annotations

import hashlib
from typing import Any

from dnsse.engine.operation import Access, Operation
from dnsse.engine.uncontrolled import refusing_getattr
from dnsse.frameworks.ray.actors import ActorHandle
from dnsse.frameworks.ray.runtime import RayRuntime, Worker, controlled, current_worker

JOB_ID = "01000000"
NODE_ID = hashlib.sha1(b"dnsse node").hexdigest()[:56].ljust(56, "0")
# What ray.cancel changes and is_canceled reads: one object, so that strategies see them as dependent.
CANCELLATION = "ray.cancellation"


def _hex(what: str, length: int) -> str:
    digest = hashlib.sha256(what.encode()).hexdigest()
    return (digest * 2)[:length]


class RuntimeContext:
    """The calling task's or actor's view of the job."""

    def __init__(self, runtime: RayRuntime) -> None:
        self._runtime = runtime

    @property
    def _worker(self) -> Worker:
        # Asked at each use: a context kept by an actor answers for the call that uses it, as Ray's does.
        return current_worker() or self._runtime.driver

    @property
    def _is_driver(self) -> bool:
        return self._worker is self._runtime.driver

    def is_canceled(self) -> bool:
        agent, runtime = controlled("ray.get_runtime_context().is_canceled")
        worker = runtime.worker_of(agent)
        if worker is runtime.driver:
            raise RuntimeError("This method is only available when the process is a worker. Current mode: 0")
        if worker.actor is not None and worker.actor.is_async:
            raise RuntimeError("This method is not supported in an async actor.")
        runtime.execution.yield_point(agent, Operation("ray.is_canceled", ((CANCELLATION, Access.READ),),
                                                       worker.label))
        return worker.cancelled

    def get_job_id(self) -> str:
        return JOB_ID

    def get_node_id(self) -> str:
        return NODE_ID

    @property
    def namespace(self) -> str:
        return "dnsse"

    def get_task_id(self) -> str | None:
        return None if self._is_driver else _hex(f"task {self._worker.label}", 48)

    def get_actor_id(self) -> str | None:
        actor = self._worker.actor
        return None if actor is None else _hex(f"actor {actor.label}", 32)

    def get_actor_name(self) -> str | None:
        actor = self._worker.actor
        return None if actor is None or actor.name is None else actor.name[1]

    def get_placement_group_id(self) -> str | None:
        group, _ = self._worker.placement()
        return None if group is None else _hex(f"placement group {group.id}", 36)

    @property
    def current_actor(self) -> ActorHandle:
        if self._worker.actor is None:
            raise RuntimeError("This method is only available in an actor.")
        return ActorHandle(self._worker.actor)

    @property
    def was_current_actor_reconstructed(self) -> bool:
        actor = self._worker.actor
        return actor is not None and actor.restarts > 0

    def __getattr__(self, name: str) -> Any:
        return _unmodelled(name)


_unmodelled = refusing_getattr(
    "ray.get_runtime_context()",
    lambda: "is_canceled, get_job_id, get_node_id, namespace, get_task_id, get_actor_id, get_actor_name, "
            "get_placement_group_id, current_actor and was_current_actor_reconstructed",
)


def get_runtime_context() -> RuntimeContext:
    _, runtime = controlled("ray.get_runtime_context")
    return RuntimeContext(runtime)
