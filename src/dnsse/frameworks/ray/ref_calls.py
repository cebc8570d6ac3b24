"""The calls a task makes on object refs: ``ray.get``, ``ray.wait``, ``ray.put`` and ``ray.cancel``.

``get`` (one ref or a list, with ``timeout``), ``wait`` (``num_returns``,
``timeout``, over refs and streaming generators), ``put`` and ``cancel`` are
scheduling points. Time is virtual: a pending ``get`` or ``wait`` with a
timeout may expire at any scheduling point (a choice).
"""

from __future__ import annotations

from typing import Any, Callable

from dnsse.engine.operation import Access, Operation
from dnsse.frameworks.ray.errors import GetTimeoutError
from dnsse.frameworks.ray.refs import ObjectRef, all_ready, describe_pending
from dnsse.frameworks.ray.runtime import RayRuntime, Worker, controlled
from dnsse.frameworks.ray.runtime_context import CANCELLATION
from dnsse.frameworks.ray.serialization import copy_value
from dnsse.frameworks.ray.streaming import ObjectRefGenerator
from dnsse.frameworks.threads.primitive import block_until


def _as_ref_list(object_refs: Any, api: str) -> tuple[list[ObjectRef], bool]:
    if isinstance(object_refs, ObjectRef):
        return [object_refs], True
    if isinstance(object_refs, (list, tuple)):
        for ref in object_refs:
            if not isinstance(ref, ObjectRef):
                break
        else:
            return list(object_refs), False
    raise ValueError(
        f"'object_refs' must either be an ObjectRef or a list of ObjectRefs (ray.{api} was given "
        f"{type(object_refs).__name__})."
    )


def get(object_refs: Any, *, timeout: float | None = None) -> Any:
    agent, runtime = controlled("ray.get")
    refs, single = _as_ref_list(object_refs, "get")
    runtime.checkpoint(agent)
    operation = Operation("ray.get", tuple([(ref.object_name, Access.READ) for ref in refs]),
                          ", ".join([ref.label() for ref in refs]))
    arrived = _wait_until(agent, runtime, operation, all_ready(refs),
                          lambda: f"ray.get of {describe_pending(refs)}", timeout)
    runtime.checkpoint(agent, faults=False)
    if not arrived:
        raise GetTimeoutError(f"Get timed out: some object(s) not ready after {timeout:g}s: {describe_pending(refs)}")
    runtime.execution.emit(agent, "ray.get", {"ref": refs[0].number if refs else None, "refs": len(refs)})
    values = [ref.fetch() for ref in refs]
    return values[0] if single else values


def wait(
    object_refs: list[ObjectRef], *, num_returns: int = 1, timeout: float | None = None, fetch_local: bool = True
) -> tuple[list[ObjectRef], list[ObjectRef]]:
    agent, runtime = controlled("ray.wait")
    if isinstance(object_refs, ObjectRef) or not isinstance(object_refs, (list, tuple)):
        raise TypeError(f"wait() expected a list of ray.ObjectRef, got {type(object_refs).__name__}")
    refs = list(object_refs)
    for ref in refs:
        if not isinstance(ref, ObjectRef):
            return _wait_with_generators(agent, runtime, refs, num_returns, timeout)
    if len(set(map(id, refs))) != len(refs):
        raise ValueError("Wait requires a list of unique ray_waitables.")
    if not 0 <= num_returns <= len(refs):
        raise ValueError(f"Invalid number of objects to return {num_returns} (given {len(refs)} refs).")
    runtime.checkpoint(agent)
    operation = Operation("ray.wait", tuple((ref.object_name, Access.READ) for ref in refs), f"{len(refs)} refs")
    _wait_until(agent, runtime, operation, lambda: sum(ref.ready for ref in refs) >= num_returns,
                lambda: f"ray.wait for {num_returns} of {describe_pending(refs)}", timeout)
    runtime.checkpoint(agent, faults=False)
    ready = [ref for ref in refs if ref.ready][:num_returns]
    chosen = set(map(id, ready))
    runtime.execution.emit(agent, "ray.wait", {"ready": len(ready)})
    return ready, [ref for ref in refs if id(ref) not in chosen]


def _wait_with_generators(agent: Any, runtime: RayRuntime, waitables: list, num_returns: int,
                          timeout: float | None) -> tuple[list, list]:
    """``ray.wait`` over refs and streaming generators: a generator is ready when its next ref is, or it ended."""
    for item in waitables:
        if not isinstance(item, (ObjectRef, ObjectRefGenerator)):
            raise TypeError(f"wait() expected a list of ray.ObjectRef or ray.ObjectRefGenerator, "
                            f"got list containing {type(item)}")
    if len(set(map(id, waitables))) != len(waitables):
        raise ValueError("Wait requires a list of unique ray_waitables.")
    if not 0 <= num_returns <= len(waitables):
        raise ValueError(f"Invalid number of objects to return {num_returns} (given {len(waitables)} refs).")

    def is_ready(item: ObjectRef | ObjectRefGenerator) -> bool:
        return item.ready if isinstance(item, ObjectRef) else item.has_next()

    def describe() -> str:
        pending = [item.label() if isinstance(item, ObjectRef) else repr(item)
                   for item in waitables if not is_ready(item)]
        return f"ray.wait for {num_returns} of {', '.join(pending) or 'nothing'}"

    runtime.checkpoint(agent)
    touched = tuple(((item if isinstance(item, ObjectRef) else item.completed()).object_name, Access.READ)
                    for item in waitables)
    operation = Operation("ray.wait", touched, f"{len(waitables)} refs")
    _wait_until(agent, runtime, operation, lambda: sum(map(is_ready, waitables)) >= num_returns, describe, timeout)
    runtime.checkpoint(agent, faults=False)
    ready = [item for item in waitables if is_ready(item)][:num_returns]
    chosen = set(map(id, ready))
    runtime.execution.emit(agent, "ray.wait", {"ready": len(ready)})
    return ready, [item for item in waitables if id(item) not in chosen]


def _wait_until(agent: Any, runtime: RayRuntime, operation: Operation, ready: Callable[[], bool],
                describe: Callable[[], str], timeout: float | None) -> bool:
    """Block until ``ready()``; a ``ray.cancel`` of the waiting task ends the wait too."""
    if timeout is not None and timeout <= 0:
        agent.execution.yield_point(agent, operation)
        return ready()
    worker = runtime.worker_of(agent)
    # A task blocked here gives its CPUs back, as Ray's workers do.
    runtime.cluster.blocked(worker.label)
    try:
        return block_until(agent, operation, lambda: worker.interrupt is not None or ready(), describe, timeout)
    finally:
        runtime.cluster.unblocked(worker.label)


def cancel(object_ref: ObjectRef, *, force: bool = False, recursive: bool = True) -> None:
    """Cancel the task or actor call that fills ``object_ref`` (see :mod:`.tasks`, :mod:`.calls`)."""
    if not isinstance(object_ref, ObjectRef):
        raise TypeError(f"ray.cancel() only supported for object refs. For actors, try ray.kill(). Got: {object_ref!r}.")
    agent, runtime = controlled("ray.cancel")
    touched = ((object_ref.object_name, Access.SYNC), (CANCELLATION, Access.WRITE))
    # The work that fills the ref (a task run or an actor call) and what it submitted: where the cancel lands matters.
    target = getattr(getattr(object_ref.canceller, "__self__", None), "worker", None)
    if isinstance(target, Worker):
        touched += target.affected_agents()
    runtime.execution.yield_point(agent, Operation("ray.cancel", touched, object_ref.label()))
    if object_ref.canceller is not None:
        object_ref.canceller(force, recursive)


def put(value: Any, **kwargs: Any) -> ObjectRef:
    agent, runtime = controlled("ray.put")
    if isinstance(value, ObjectRef):
        raise TypeError("Calling 'put' on an ray.ObjectRef is not allowed. If you really want to do this, "
                        "you can wrap the ray.ObjectRef in a list and call 'put' on it.")
    runtime.checkpoint(agent)
    ref = ObjectRef(runtime.next_ref_number(), "ray.put")
    stored = copy_value(value)
    runtime.execution.yield_point(agent, Operation("ray.put", ((ref.object_name, Access.WRITE),), ref.label()))
    ref.fill(stored)
    runtime.execution.emit(agent, "ray.put", {"ref": ref.number})
    return ref
