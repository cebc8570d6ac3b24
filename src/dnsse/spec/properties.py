"""Properties a run is checked against, and the per-run checkers they hand out.

A property is parsed once per campaign; each execution gets a fresh checker
fed one position (the events of one step) at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from dnsse.spec.automaton import Automaton, EventLike
from dnsse.spec.monitor import Monitor, Verdict
from dnsse.spec.syntax import Formula


class Checker(Protocol):
    """One run's checker of one property, fed one position at a time."""

    @property
    def window_start(self) -> int:
        """The first position of the window that leads to the current verdict."""
        ...

    def observe(self, event: EventLike) -> None:
        """Add one event to the current position."""
        ...

    def end_position(self) -> Verdict:
        """Close the position; VIOLATED as soon as no continuation can satisfy the property."""
        ...

    def holds_if_ended(self) -> bool:
        """The finite-trace verdict if the run ended now."""
        ...

    def explain(self, ended: bool) -> list[str]:
        """Why the property is violated (after a VIOLATED position, or at the end when ``ended``)."""
        ...


class Property(Protocol):
    text: str

    def checker(self) -> Checker | None:
        """A checker for a new run; ``None`` for a property the engine checks by itself."""
        ...


@dataclass
class LtlProperty:
    """An LTL formula; its automaton is shared by every run of the campaign."""

    text: str
    formula: Formula
    _automaton: Automaton | None = field(default=None, repr=False, compare=False)

    def checker(self) -> LtlChecker:
        if self._automaton is None:
            self._automaton = Automaton(self.formula)
        return LtlChecker(self._automaton)


class LtlChecker(Monitor):
    __slots__ = ()

    def explain(self, ended: bool) -> list[str]:
        if ended:
            return [f"the run ended while the formula still required: {self.unmet()}"]
        return ["no continuation of the run can satisfy the formula any more (a bad prefix)"]
