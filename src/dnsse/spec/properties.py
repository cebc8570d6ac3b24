"""Properties a run is checked against, and the per-run checkers they hand out.

A property is parsed once per campaign; each execution gets a fresh checker
fed one position (the events of one step) at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence

from dnsse.spec.monitor import Automaton, EventLike, Monitor, Verdict
from dnsse.spec.syntax import Formula


class Checker(Protocol):
    """One run's checker of one property."""

    @property
    def window_start(self) -> int:
        """The first position of the window that leads to the current verdict."""
        ...

    def step(self, events: Sequence[EventLike]) -> Verdict:
        """Feed one position; VIOLATED as soon as no continuation can satisfy the property."""
        ...

    def holds_if_ended(self) -> bool:
        """The finite-trace verdict if the run ended now."""
        ...

    def explain(self, ended: bool) -> list[str]:
        """Why the property is violated (after a VIOLATED step, or at the end when ``ended``)."""
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
        return LtlChecker(Monitor(self._automaton))


class LtlChecker:
    def __init__(self, monitor: Monitor) -> None:
        self.monitor = monitor

    @property
    def window_start(self) -> int:
        return self.monitor.window_start

    def step(self, events: Sequence[EventLike]) -> Verdict:
        return self.monitor.step(events)

    def holds_if_ended(self) -> bool:
        return self.monitor.holds_if_ended()

    def explain(self, ended: bool) -> list[str]:
        if ended:
            return [f"the run ended while the formula still required: {self.monitor.unmet()}"]
        return ["no continuation of the run can satisfy the formula any more (a bad prefix)"]
