"""``ray.kill`` and ``ray.get_actor``: ending an actor through its handle, and finding one by its name."""

from __future__ import annotations

from dnsse.engine.operation import Access, Operation
from dnsse.frameworks.ray.actors import ActorHandle
from dnsse.frameworks.ray.runtime import controlled


def kill(actor: ActorHandle, *, no_restart: bool = True) -> None:
    if not isinstance(actor, ActorHandle):
        raise ValueError(f"ray.kill() only supported for actors. For tasks, try ray.cancel(). Got: {actor!r}.")
    agent, runtime = controlled("ray.kill")
    state = actor._actor
    touched: tuple[tuple[str, Access], ...] = ((state.object_name, Access.SYNC),)
    for call in state.running:
        # A running call is cut at its next Ray call: where the kill lands among its steps matters.
        if call.worker is not None:
            touched += call.worker.affected_agents()
    runtime.execution.yield_point(agent, Operation("ray.kill", touched, state.label))
    state.kill(no_restart)
    runtime.execution.emit(agent, "actor.kill", {"actor": state.label})


def get_actor(name: str, namespace: str | None = None) -> ActorHandle:
    agent, runtime = controlled("ray.get_actor")
    runtime.execution.yield_point(agent, Operation("ray.get_actor", (("actors", Access.READ),), name))
    actor = runtime.named.get((namespace or "", name))
    if actor is None:
        raise ValueError(
            f"Failed to look up actor with name '{name}'. It was not created with that name "
            "(ray.remote(...).options(name=...)), it died, or it lives in another namespace."
        )
    return ActorHandle(actor)
