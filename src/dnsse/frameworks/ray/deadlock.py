"""Deadlock reports of Ray programs: who waits for which ref, actor or event loop.

The message names the blocked workers by role (``driver``, ``Ping#1.start``,
``square``), sorted and without call numbers, so the same deadlock reached by
different schedules is one bug; the details say, for every blocked call, what
it waits for (``ray.get of ObjectRef#3 (Pong#1.pong#2)``, ``Ping#1 to finish
Ping#1.start#1``) and where in the program.
"""

from __future__ import annotations


from dnsse.engine.agent import Agent, ThreadAgent
from dnsse.engine.bugs import Bug, BugKind
from dnsse.engine.execution import Execution
from dnsse.frameworks.ray.runtime import Worker


def explain_deadlock(execution: Execution, blocked: list[Agent]) -> Bug:
    agents = [agent for agent in blocked if isinstance(agent, ThreadAgent)
              and not (isinstance(agent.handle, Worker) and agent.handle.machinery)]
    roles = sorted({_role(agent) for agent in agents})
    details = []
    for agent in agents:
        reason = agent.waiting.describe() if agent.waiting is not None else "nothing"
        where = _location(execution, agent)
        details.append(f"{agent.name} waits for {reason}" + (f" at {where}" if where else ""))
    return Bug(BugKind.DEADLOCK, f"every live agent is blocked ({', '.join(roles)})", details=details)


def _role(agent: ThreadAgent) -> str:
    worker = agent.handle
    if not isinstance(worker, Worker):
        return agent.name
    if worker.call is not None:
        return f"{worker.call.actor.label}.{worker.call.method}"
    return worker.label.rsplit("#", 1)[0] if worker.label != "driver" else "driver"


def _location(execution: Execution, agent: ThreadAgent) -> str | None:
    """The innermost frame of the program under test where the agent waits."""
    frame = agent.current_frame()
    while frame is not None:
        if frame.f_code.co_filename in execution.source_files:
            return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}"
        frame = frame.f_back
    return None
