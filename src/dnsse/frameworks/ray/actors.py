"""``@ray.remote`` classes: creating actors, handles, and submitting method calls.

Creating an actor and submitting a call are scheduling points; the call's
agent then waits for its actor's start rule (:mod:`.actor_state`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dnsse.engine.operation import Access, Operation
from dnsse.engine.value_text import call_text
from dnsse.frameworks.ray import options as opts
from dnsse.frameworks.ray.actor_state import DEFAULT_GROUP, TERMINATE, Actor, ActorExit, Call, terminate
from dnsse.frameworks.ray.calls import start_call
from dnsse.frameworks.ray.errors import ActorAlreadyExistsError, PendingCallsLimitExceeded
from dnsse.frameworks.ray.refs import ObjectRef
from dnsse.frameworks.ray.runtime import controlled
from dnsse.frameworks.ray.serialization import copy_value, passed_by_name
from dnsse.frameworks.ray.streaming import DYNAMIC, ObjectRefGenerator, is_streaming
from dnsse.frameworks.ray.unmodelled import refuse_dag

METHOD_OPTIONS_ATTRIBUTE = "__dnsse_ray_method_options__"


# Shipped as a name, as Ray pickles an actor class's handle.
@passed_by_name
class ActorClass:
    """What ``@ray.remote`` makes of a class: ``Cls.remote(...)`` creates an actor."""

    def __init__(self, cls: type, options: dict[str, Any]) -> None:
        self._cls = cls
        self._options = opts.checked(options, opts.ACTOR_OPTIONS, "an actor class")
        self.__name__ = cls.__name__
        self.__qualname__ = cls.__qualname__
        self.__doc__ = cls.__doc__
        self.__module__ = cls.__module__
        # What a worker process that imports the class's module (another file of the program) runs.
        self.__wrapped__ = cls

    def options(self, **options: Any) -> ActorClass:
        return ActorClass(self._cls, {**self._options, **options})

    def remote(self, *args: Any, **kwargs: Any) -> ActorHandle:
        agent, runtime = controlled(f"{self.__name__}.remote()")
        options = self._options
        runtime.checkpoint(agent)
        key = None
        if options.get("name"):
            key = (str(options.get("namespace") or ""), str(options["name"]))
            existing = runtime.named.get(key)
            if existing is not None:
                if options.get("get_if_exists"):
                    return ActorHandle(existing)
                raise ActorAlreadyExistsError(
                    f"The name {key[1]} (namespace={key[0] or None}) is already taken; "
                    "pick another name, or pass get_if_exists=True to get the existing actor"
                )
        runtime.execution.yield_point(agent, Operation("actor.submit", (), f"{self.__name__}.remote()"))
        runtime.checkpoint(agent, faults=False)
        shipment = runtime.shipment(self._cls)
        actor = Actor(runtime, self._cls, shipment, copy_value(args), copy_value(kwargs), options,
                      runtime.worker_of(agent))
        if key is not None:
            actor.name = key
            runtime.named[key] = actor
        return ActorHandle(actor)

    def bind(self, *args: Any, **kwargs: Any) -> Any:
        refuse_dag(self.__name__)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            f"Actors cannot be instantiated directly. Instead of '{self.__name__}()', use '{self.__name__}.remote()'."
        )

    def __repr__(self) -> str:
        return f"<actor class {self.__qualname__}>"


@passed_by_name
class ActorHandle:
    """A handle to an actor: ``handle.method.remote(...)`` submits a call."""

    def __init__(self, actor: Actor) -> None:
        self._actor = actor

    def __getattr__(self, name: str) -> ActorMethod:
        if name.startswith("__") and name != TERMINATE:
            raise AttributeError(name)
        member = terminate if name == TERMINATE else getattr(self._actor.cls, name, None)
        if not callable(member):
            raise AttributeError(
                f"'ActorHandle' object has no attribute '{name}' ({self._actor.label} has no such method)"
            )
        method = ActorMethod(self._actor, name, dict(getattr(member, METHOD_OPTIONS_ATTRIBUTE, {})))
        # Kept, as Ray's handle keeps one per method: the next `handle.name` finds it without asking again.
        self.__dict__[name] = method
        return method

    def __repr__(self) -> str:
        return f"Actor({self._actor.cls.__name__}, {self._actor.label})"

    def __copy__(self) -> ActorHandle:
        return self


@dataclass(frozen=True)
class _CallShape:
    """What every call of one actor method shares: whether it streams, its refs, retries and concurrency group."""

    streaming: bool
    count: int
    retries: int
    group: str


class ActorMethod:
    def __init__(self, actor: Actor, name: str, options: dict[str, Any]) -> None:
        self._actor = actor
        self._name = name
        self._options = opts.checked(options, opts.METHOD_OPTIONS, f"the actor method {name}")
        # What its calls share, worked out at the first call (invalid options fail every call).
        self._shape: _CallShape | None = None

    def options(self, **options: Any) -> ActorMethod:
        return ActorMethod(self._actor, self._name, {**self._options, **options})

    def remote(self, *args: Any, **kwargs: Any) -> Any:
        actor = self._actor
        agent, runtime = controlled(f"{actor.label}.{self._name}.remote()")
        shape = self._shape or self._shape_of_calls()
        streaming, count, retries, group = shape.streaming, shape.count, shape.retries, shape.group
        submitter = runtime.worker_of(agent)
        caller = submitter.caller
        if 0 <= actor.max_pending_calls <= actor.pending_calls(caller):
            raise PendingCallsLimitExceeded(
                f"The actor {actor.label} already has {actor.pending_calls(caller)} pending calls from {caller}, "
                f"its max_pending_calls={actor.max_pending_calls}; wait for results before submitting more"
            )
        runtime.checkpoint(agent)
        number = runtime.next_work_number()
        label = f"{actor.label}.{self._name}#{number}"
        args, kwargs = copy_value(args), copy_value(kwargs)
        refs = [ObjectRef(runtime.next_ref_number(), label)] if count == 1 else [
            ObjectRef(runtime.next_ref_number(), label) for _ in range(count)
        ]
        runtime.execution.yield_point(agent, Operation("actor.submit", ((actor.object_name, Access.SYNC),), label))
        # A cancel that came meanwhile interrupts the submitter before its call exists.
        runtime.checkpoint(agent, faults=False)
        call = Call(actor, self._name, number, args, kwargs, refs, caller, retries, group)
        call.stream = ObjectRefGenerator(refs[0]) if streaming else None
        call.dynamic = self._options.get("num_returns") == DYNAMIC
        actor.enqueue(call)
        start_call(runtime, call)
        # ray.cancel(recursive=True) of the submitter's own task or call reaches this call too.
        submitter.children.append(lambda force: call.cancel(False, recursive=True))
        submitter.related.append(call.worker)
        runtime.execution.emit(agent, "actor.call.submit", {
            "actor": actor.label, "method": self._name, "ref": refs[0].number if refs else None,
            "args": call_text(args, kwargs),
        })
        if call.stream is not None:
            return call.stream
        if count == 1:
            return refs[0]  # num_returns unset, 1 or "dynamic": one ref, as Ray returns it
        return refs if refs else None

    def _shape_of_calls(self) -> _CallShape:
        actor = self._actor
        streaming = is_streaming(self._options.get("num_returns"), getattr(actor.cls, self._name, terminate))
        count = 1 if streaming else opts.num_returns(self._options.get("num_returns"))
        retries = opts.retries(self._options.get("max_task_retries"), actor.max_task_retries)
        group = self._options.get("concurrency_group") or ""
        if group and group not in actor.groups:
            raise ValueError(
                f"{actor.label}.{self._name} names the concurrency group {group!r}, which the actor does not "
                f"declare; its groups are {', '.join(sorted(g for g in actor.groups if g != DEFAULT_GROUP))}"
            )
        self._shape = _CallShape(streaming, count, retries, group)
        return self._shape

    def bind(self, *args: Any, **kwargs: Any) -> Any:
        refuse_dag(f"{self._actor.label}.{self._name}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            f"Actor methods cannot be called directly. Instead of running 'object.{self._name}()', "
            f"try 'object.{self._name}.remote()'."
        )


def exit_actor() -> None:
    """``ray.actor.exit_actor()`` inside an actor method: the actor ends once this call unwinds, and never restarts."""
    agent, runtime = controlled("ray.actor.exit_actor()")
    if runtime.worker_of(agent).actor is None:
        raise TypeError("exit_actor API is called on a non-actor worker. Call this API inside an actor method "
                        "if you'd like to exit the actor gracefully.")
    raise ActorExit()
