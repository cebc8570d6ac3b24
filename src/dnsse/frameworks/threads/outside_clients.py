"""A server left waiting for clients when nothing else can run waits for the world outside: no deadlock.

The loopback network (:mod:`.network`) holds only the program's own
clients. A server that serves forever (``Server.serve_forever()``, a thread
looping on ``accept()``) is written for clients from anywhere, so when no
agent of the program can go on it is not stuck for a reason of its own: it
waits for someone outside, whom dnsse does not model. Such a run is
refused (exit 2) instead of reported as a deadlock. Every other deadlock
stays one, server open or not: a client and a handler waiting for each
other wait forever whoever else connects.
"""

from __future__ import annotations

from typing import Any, Callable

from dnsse.engine.agent import Wait

_ADVICE = "which dnsse does not model; check a function whose own clients connect, then close the server"


class AcceptWait(Wait):
    """A thread waiting in ``accept()`` on ``address``."""

    __slots__ = ("address",)

    def __init__(self, ready: Callable[[], bool], describe: Callable[[], str], timeout: float | None,
                 address: object) -> None:
        super().__init__(ready, describe, timeout)
        self.address = address


def watch_accepts(execution: Any) -> None:
    """Once per execution, from its first listening socket: a deadlock with a thread in ``accept()`` is refused."""
    if execution.framework_state.get("accepts watched"):
        return
    execution.framework_state["accepts watched"] = True

    def explain(blocked: list) -> None:
        for agent in blocked:
            if isinstance(agent.waiting, AcceptWait):
                execution.refuse(
                    f"socket.accept() on {agent.waiting.address!r} is not under control yet: once no thread of the "
                    f"program can go on, {agent.name} waits in it for clients from outside the program, {_ADVICE}"
                )
                return None
        return None

    execution.deadlock_explainers.append(explain)


def servers_of(execution: Any) -> list:
    """The execution's asyncio servers; the first one made installs the refusal of a deadlock in ``serve_forever``."""
    servers = execution.framework_state.get("asyncio servers")
    if servers is not None:
        return servers
    servers = execution.framework_state["asyncio servers"] = []

    def explain(blocked: list) -> None:
        for server in servers:
            forever = server._serving_forever_fut
            if forever is not None and not forever.done():
                address = server._sockets[0].getsockname() if server._sockets else None
                execution.refuse(
                    f"asyncio Server.serve_forever() on {address!r} is not under control yet: once no task of the "
                    f"program can go on, it waits for clients from outside the program, {_ADVICE}"
                )
                return None
        return None

    execution.deadlock_explainers.append(explain)
    return servers
