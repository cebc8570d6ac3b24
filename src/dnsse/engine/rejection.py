"""Inputs the program rejects: neither a bug nor a pass (DESIGN §1, §2 inputs).

A program rejects the input it was given in three ways:

- ``dnsse.assume(False)`` anywhere;
- an exception its entry function raises before it took any controlled
  step: argument checking (``ValueError("batch must be positive")``), or an
  allocation that the value makes impossible (``torch.zeros(-1)``). A
  failed ``assert`` is never argument checking: it is the program's own
  check failing, a bug wherever it stands;
- a run cut off by the step limit, the wall clock or the memory limit while an input without
  a Range holds a value other than its default that is huge
  (:func:`large_for`: beyond :data:`LARGE`, or far beyond the default; or
  an infinite or NaN one):
  a count of work that large never finishes under control, and saying so
  is no news about the program.

The run is then not judged; the campaign counts it and goes on, as
Hypothesis goes on past an ``assume`` that failed.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Collection, Mapping, Sequence

from dnsse.engine.bugs import BugKind
from dnsse.engine.inputs import InputParameter, is_open
from dnsse.engine.limits import Limits
from dnsse.engine.memory import exhausted, is_exhausted

if TYPE_CHECKING:
    from dnsse.engine.execution import Execution

# The exception that is the program's own check failing, never argument checking.
FAILED_CHECK = "AssertionError"
# Beyond this magnitude an open input is a count no run under control finishes.
LARGE = 2**16
# How many times its default's magnitude (at least 16) a value may be before it counts as huge.
WORK_FACTOR = 64
# The limits of a run with such an input: a bug it shows, it shows soon; a count of work is cut soon.
HUGE_INPUT_STEPS = 5_000
HUGE_INPUT_SECONDS = 1.0


def rejected_before_first_step(execution: Execution, entry_agents: Collection[int]) -> str | None:
    """The rejection message when the run's bug is an entry agent's exception before its first controlled step.

    ``entry_agents`` are the agents that run the entry function (the ranks,
    the driver, the main thread); an agent they start that raises at once is
    the program's bug, not argument checking.
    """
    bug = execution.bug
    if bug is None or bug.kind != BugKind.EXCEPTION or bug.message.split(":")[0] == FAILED_CHECK:
        return None
    agent = next((a for a in execution.agents if a.name == bug.agent), None)
    if agent is None or agent.id not in entry_agents:
        return None
    if any(who == agent.id and operation.kind != "start" for who, operation in execution.history):
        return None
    return f"{bug.agent}: {bug.message}"


def huge_input(parameters: Sequence[InputParameter], inputs: Mapping[str, object], pinned: Collection[str]) -> str | None:
    """Why the run's inputs may be too much work: an open input other than its default beyond LARGE."""
    for parameter in parameters:
        if parameter.name in pinned or parameter.domain is None or not is_open(parameter.domain.widths()[0]):
            continue
        value = inputs.get(parameter.name)
        if value == parameter.default or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if not (math.isfinite(value) and abs(value) <= large_for(parameter.default)):
            return (
                f"{parameter.name}={value!r} is more work than a run under control finishes "
                f"(give {parameter.name} a dnsse.Range to bound it)"
            )
    return None


def large_for(default: object) -> float:
    """Beyond what magnitude a value of an input with this default is more work than runs finish.

    :data:`LARGE`, or less for a small default: ``steps: int = 3`` at 6,000 is
    a count of work two thousand times the one the program was written for.
    """
    scale = abs(default) if isinstance(default, (int, float)) and math.isfinite(default) else 0.0
    return min(LARGE, WORK_FACTOR * max(scale, 16.0))


def cut_short(limits: Limits) -> Limits:
    """The limits of a run with a huge input: it shows a bug soon, or it is rejected soon."""
    return replace(
        limits,
        max_steps=min(limits.max_steps, HUGE_INPUT_STEPS),
        max_seconds=min(limits.max_seconds, HUGE_INPUT_SECONDS),
    )


def rejected_as_too_large(execution: Execution, huge: str | None) -> str | None:
    """``huge`` (see :func:`huge_input`) when a limit cut the run off: steps, wall clock or memory."""
    bug = exhausted(execution.bug)
    cut = execution.inconclusive is not None or bug is not None and (bug.kind == BugKind.TIMEOUT or is_exhausted(bug))
    return huge if cut else None
