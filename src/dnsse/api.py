"""What a program under test may call: events for specifications, and input bounds."""

from __future__ import annotations

from dnsse.engine.execution import current_agent
from dnsse.engine.inputs import Range, TensorSpec

__all__ = ["emit", "Range", "TensorSpec"]


def emit(name: str, **fields: object) -> None:
    """Record event ``name`` with ``fields`` at the current step of the run.

    Outside a dnsse execution (the program run with plain Python) this does
    nothing, so programs can keep their ``emit`` calls in production.
    """
    agent = current_agent()
    if agent is not None:
        agent.execution.emit(agent, name, fields)
