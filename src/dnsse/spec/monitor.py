"""The incremental LTL monitor: one run's walk through a formula's automaton.

The automaton (:mod:`dnsse.spec.automaton`) is shared by the runs of a
campaign; a monitor holds one run's state, so a position costs one dict
lookup once the automaton has seen the transition. Verdicts: VIOLATED as
soon as no continuation can satisfy the formula, SATISFIED as soon as every
continuation does, and :meth:`Monitor.holds_if_ended` for a finished run.
"""

from __future__ import annotations

import enum
from typing import Iterable

from dnsse.spec.automaton import SATISFIED_STATE, VIOLATED_STATE, Automaton, EventLike, tested_bits


class Verdict(enum.Enum):
    PENDING = "pending"
    SATISFIED = "satisfied"
    VIOLATED = "violated"


_PENDING, _SATISFIED, _VIOLATED = Verdict.PENDING, Verdict.SATISFIED, Verdict.VIOLATED


class Monitor:
    """One run's view of an automaton: feed positions, read the verdict.

    A position is fed either whole (:meth:`step`) or event by event
    (:meth:`observe`, then :meth:`end_position`), which is how a run feeds it.

    ``window_start`` is the position after the last one at which the monitor
    was at rest (in the state a position without relevant events leads to):
    the positions from there on are the ones that led to the current verdict
    (for ``G (req -> F ack)``, from the ``req`` that was never answered).
    """

    __slots__ = (
        "automaton", "state", "positions", "window_start", "mask",
        "_by_name", "_transitions", "_shift", "_quiet", "_initial",
    )

    def __init__(self, automaton: Automaton) -> None:
        self.automaton = automaton
        self.state = automaton.initial
        self.positions = 0
        self.window_start = 0
        self.mask = 0
        # Hot-path copies: one attribute lookup less per event.
        self._by_name = automaton.by_name
        self._transitions = automaton.transitions
        self._shift = automaton.atom_bits
        self._quiet = automaton.quiet
        self._initial = automaton.initial

    def observe(self, event: EventLike) -> None:
        """Add one event to the current position."""
        entry = self._by_name.get(event.name)
        if entry is not None:
            self.mask |= entry[0] | (tested_bits(entry[1], event.fields) if entry[1] else 0)

    def end_position(self) -> Verdict:
        """Close the current position; the verdict on every continuation of the run."""
        mask, self.mask = self.mask, 0
        state = self._transitions.get((self.state << self._shift) | mask)
        if state is None:
            state = self.automaton.advance(self.state, mask)
        self.state = state
        self.positions += 1
        if state == self._quiet or state == self._initial:
            self.window_start = self.positions
        if state > VIOLATED_STATE:
            return _PENDING
        return _VIOLATED if state == VIOLATED_STATE else _SATISFIED

    def step(self, events: Iterable[EventLike]) -> Verdict:
        """Feed the events of one position; the verdict on every continuation."""
        by_name = self._by_name
        mask = self.mask
        for event in events:
            entry = by_name.get(event.name)
            if entry is not None:
                mask |= entry[0] | (tested_bits(entry[1], event.fields) if entry[1] else 0)
        self.mask = mask
        return self.end_position()

    @property
    def verdict(self) -> Verdict:
        if self.state == VIOLATED_STATE:
            return _VIOLATED
        if self.state == SATISFIED_STATE:
            return _SATISFIED
        return _PENDING

    def holds_if_ended(self) -> bool:
        """The LTLf verdict if the run ended after the positions fed so far."""
        return self.automaton.holds_at_end(self.state)

    def unmet(self) -> str:
        """What the run still owed when it ended (for reports)."""
        return self.automaton.unmet_at_end(self.state)
