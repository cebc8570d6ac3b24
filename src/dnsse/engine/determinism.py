"""The determinism check: a run that follows a recorded trace must make the same choices.

Every recorded choice says what it chose (:class:`~dnsse.engine.choices.Chosen`:
the agent, its operation, the line). A run that follows a trace (a replay, a
bug's confirmation, a shrinking step's unedited prefix) compares each of its
choices with the recorded one as it makes it, so a program that left dnsse's
control is caught at the first choice where it went another way, and the
message says where and how, as Shuttle's replay does:
``choice 17: the trace ran rank 1's all_reduce at train.py:40; this run
offered rank 0's send at train.py:52``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from dnsse.engine.choices import Choice, ChoiceKind, Chosen, TraceDivergence

# How many of the runnable agents a message lists.
_LISTED = 4


@dataclass(frozen=True)
class Expected:
    """The choices a run must make. ``complete``: all of them, and no more (a strict replay)."""

    choices: Sequence[Choice]
    complete: bool = True


def _recorded(choice: Choice) -> str:
    if choice.kind == ChoiceKind.AGENT:
        what = f"ran {choice.chosen.describe()}" if choice.chosen is not None else f"ran agent {choice.index + 1}"
        return f"{what} (one of {choice.options} runnable agents)"
    by = f" asked by {choice.chosen.describe()}" if choice.chosen is not None else ""
    return f"chose {choice.index + 1} of {choice.options} for a {choice.kind} choice{by}"


def _same(recorded: Chosen, made: Chosen) -> bool:
    """The same operation at the same line. Agent names are left out: libraries number their
    threads with process-wide counters (``ThreadPoolExecutor-3_0``), so they differ between runs of one schedule."""
    return recorded.operation == made.operation and recorded.where == made.where


class DeterminismCheck:
    """Compares the choices of a run, one by one, with the ones it is expected to make."""

    __slots__ = ("expected",)

    def __init__(self, expected: Expected) -> None:
        self.expected = expected

    def before(self, position: int, kind: str, options: int, offered: Callable[[], list[Chosen]]) -> None:
        """Raise TraceDivergence when the trace recorded another kind of choice here, or none."""
        choices = self.expected.choices
        if position >= len(choices):
            if self.expected.complete:
                raise TraceDivergence(
                    f"choice {position + 1}: the trace ends after {len(choices)} choices; "
                    f"this run {self._asked(kind, options, offered())}"
                )
            return
        recorded = choices[position]
        if recorded.kind != kind or recorded.options != options:
            raise TraceDivergence(
                f"choice {position + 1}: the trace {_recorded(recorded)}; this run {self._asked(kind, options, offered())}"
            )

    def after(self, position: int, made: Choice) -> None:
        """Raise TraceDivergence when the same choice picked something else than the trace."""
        choices = self.expected.choices
        if position >= len(choices):
            return
        recorded = choices[position]
        if recorded.chosen is None or made.chosen is None or _same(recorded.chosen, made.chosen):
            return
        if made.kind == ChoiceKind.AGENT:
            raise TraceDivergence(
                f"choice {position + 1}: the trace ran {recorded.chosen.describe()}; "
                f"this run offered {made.chosen.describe()}"
            )
        raise TraceDivergence(
            f"choice {position + 1}: the trace's {made.kind} choice was asked by {recorded.chosen.describe()}; "
            f"in this run by {made.chosen.describe()}"
        )

    def at_end(self, made: int) -> str | None:
        """Why the run does not fit the trace, when it ended before using all of it."""
        choices = self.expected.choices
        if not self.expected.complete or made >= len(choices):
            return None
        return (
            f"the run ended after {made} of the {len(choices)} recorded choices: the trace does not fit "
            f"(its choice {made + 1} {_recorded(choices[made])})"
        )

    @staticmethod
    def _asked(kind: str, options: int, offered: list[Chosen]) -> str:
        if kind == ChoiceKind.AGENT:
            listed = ", ".join(chosen.describe() for chosen in offered[:_LISTED])
            more = f" and {len(offered) - _LISTED} more" if len(offered) > _LISTED else ""
            return f"offered {options} runnable agents: {listed}{more}"
        by = f" by {offered[0].describe()}" if offered else ""
        return f"asked for a {kind} choice among {options}{by}"
