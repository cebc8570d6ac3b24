"""The recent executions the advisor's schedule solver orders hints in (see dnsse.search.llm)."""

from __future__ import annotations

from dataclasses import dataclass

from dnsse.advisor.summary import Step
from dnsse.engine.choices import Choice
from dnsse.engine.operation import Operation


@dataclass
class RecentRun:
    """One execution, for the solver: its history, where the named steps lie in it, its other choices."""

    history: list[tuple[int, Operation]]
    created_at: list[int]
    steps: list[Step]
    positions: list[int]
    values: list[tuple[str, int]]
    choices: list[Choice]  # to run it again at --resume (see dnsse.search.saved_advice)
