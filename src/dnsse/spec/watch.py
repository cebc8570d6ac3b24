"""Specifications riding along an execution: positions in, a violation out.

A position is a step at which at least one event happened; steps without
events are not positions. So a formula does not depend on how many invisible
scheduling points (a shared-variable read, a lock probe) a run has, and
``X a`` means "at the next step where something observable happens".

The events of a step are collected as they are emitted and judged when the
next step begins (a step observer), so a violated safety property stops the
execution before the next agent moves, and the bug's step is the step that
decided it. When the run ends, the last position is fed and the residual
obligations are judged as a finished trace. A run cut off by a limit, a
deadlock or an exception reports only what was decided before it stopped
(its own bug comes first).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from dnsse.engine.bugs import Bug, BugKind
from dnsse.engine.execution import Event, Execution
from dnsse.engine.operation import Operation
from dnsse.spec.monitor import Verdict
from dnsse.spec.properties import Checker, Property
from dnsse.spec.syntax import render_value

# A violation report lists at most this many events of its window (the
# latest ones, which include those of the deciding step).
WINDOW_EVENTS = 40
_PENDING = Verdict.PENDING


@dataclass
class SpecSuite:
    """The properties of a campaign; :meth:`attach` watches one execution."""

    properties: list[Property]

    @property
    def texts(self) -> list[str]:
        return [prop.text for prop in self.properties]

    def attach(self, execution: Execution) -> Callable[[], Bug | None]:
        """Subscribe to ``execution``; the returned function judges the run once it completed."""
        return _Watch(self.properties, execution).finish


class _Watch:
    def __init__(self, properties: list[Property], execution: Execution) -> None:
        self.execution = execution
        self.entries: list[tuple[Property, Checker]] = []
        for prop in properties:
            checker = prop.checker()
            if checker is not None:
                self.entries.append((prop, checker))
        self.observers = [checker.observe for _, checker in self.entries]
        self.pending = False  # the current position has events
        self.letter_step = -1
        self.position_steps: list[int] = []
        if self.entries:
            execution.event_observers.append(self._on_event)
            execution.step_observers.append(self._on_step)

    def _on_event(self, event: Event) -> None:
        if self.execution.aborted:
            return  # agents unwinding after the end: not part of the run
        if event.step != self.letter_step:
            if self.pending:
                bug = self._flush()
                if bug is not None:
                    self.execution.fail(bug)
            self.letter_step = event.step
        self.pending = True
        for observe in self.observers:
            observe(event)

    def _on_step(self, _agent: object, _operation: Operation) -> None:
        if self.pending:
            bug = self._flush()
            if bug is not None:
                self.execution.fail(bug)

    def _flush(self) -> Bug | None:
        self.pending = False
        self.position_steps.append(self.letter_step)
        for entry in self.entries:
            verdict = entry[1].end_position()
            if verdict is _PENDING:
                continue
            if verdict is Verdict.VIOLATED:
                self._stop_watching()
                return self._violation(*entry, ended=False)
            self.entries = [other for other in self.entries if other is not entry]
            self.observers = [checker.observe for _, checker in self.entries]
        return None

    def _stop_watching(self) -> None:
        self.entries = []
        self.observers = []

    def finish(self) -> Bug | None:
        """The verdict on a completed run: the last position, then LTLf at the end."""
        bug = self._flush() if self.pending else None
        if bug is not None:
            return bug
        for prop, checker in self.entries:
            if not checker.holds_if_ended():
                return self._violation(prop, checker, ended=True)
        return None

    def _violation(self, prop: Property, checker: Checker, ended: bool) -> Bug:
        steps = self.position_steps
        decided = steps[-1] if steps else self.execution.step
        first = steps[checker.window_start] if checker.window_start < len(steps) else decided
        window = [event for event in self.execution.events if first <= event.step <= decided]
        details = [f"formula: {prop.text}", *checker.explain(ended)]
        if window:
            span = f"step {decided}" if first == decided else f"steps {first}..{decided}"
            details.append(f"events of {span} that decided it:")
            if len(window) > WINDOW_EVENTS:
                details.append(f"  ({len(window) - WINDOW_EVENTS} earlier events of the window left out)")
                window = window[-WINDOW_EVENTS:]
            details.extend(f"  {describe_event(event)}" for event in window)
        else:
            details.append("no event happened in the run")
        # The step stays out of the message: the same violation at another
        # step is the same bug for deduplication.
        message = f"{prop.text} is violated" + (" when the run ended" if ended else "")
        return Bug(BugKind.SPEC_VIOLATION, message, details=details, step=decided)


def describe_event(event: Event) -> str:
    """``step 12 rank 0: collective.issue(op=all_reduce, rank=0)``."""
    fields = ", ".join(f"{key}={_field_text(value)}" for key, value in event.fields.items())
    return f"step {event.step} {event.agent}: {event.name}({fields})"


def _field_text(value: object) -> str:
    text = render_value(value) if isinstance(value, (bool, int, float, str)) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
