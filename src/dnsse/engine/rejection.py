"""Inputs the program rejects: neither a bug nor a pass (DESIGN §1, §2 inputs).

A program rejects the input it was given in two ways: ``dnsse.assume(False)``
anywhere, or the exception of argument checking (a ``ValueError``,
``TypeError`` or ``NotImplementedError``, as ``ValueError("batch must be
positive")``) raised by its entry function before it took any controlled
step. The run is then not judged; the campaign counts it and goes on, as
Hypothesis goes on past an ``assume`` that failed. A failed ``assert`` is
never argument checking: it is the program's own check failing, a bug,
wherever it stands.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Collection

from dnsse.engine.bugs import BugKind

if TYPE_CHECKING:
    from dnsse.engine.execution import Execution

# The exceptions argument checking raises, by the names a bug's message starts with.
ARGUMENT_ERRORS = ("ValueError", "TypeError", "NotImplementedError")


class InputRejected(BaseException):
    """Raised by ``dnsse.assume(False)``: not an ``Exception``, so the program's ``except Exception`` lets it through."""


def rejected_before_first_step(execution: Execution, entry_agents: Collection[int]) -> str | None:
    """The rejection message when the run's bug is an entry agent's exception before its first controlled step.

    ``entry_agents`` are the agents that run the entry function (the ranks,
    the driver, the main thread); an agent they start that raises at once is
    the program's bug, not argument checking.
    """
    bug = execution.bug
    if bug is None or bug.kind != BugKind.EXCEPTION or bug.message.split(":")[0] not in ARGUMENT_ERRORS:
        return None
    agent = next((a for a in execution.agents if a.name == bug.agent), None)
    if agent is None or agent.id not in entry_agents:
        return None
    if any(who == agent.id and operation.kind != "start" for who, operation in execution.history):
        return None
    return f"{bug.agent}: {bug.message}"
