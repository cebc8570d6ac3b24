"""The advisor that needs no network: predictions from the observed runs alone.

It proposes what experience says breaks concurrent programs:

- reverse every observed race: an order of two dependent operations that the
  runs showed only one way round is tried the other way;
- open every read-modify-write window: another agent's write of an object
  between one agent's read and its write of it (the lost update, the
  check-then-act), and a collective or receive of a rank that ran early held
  back until a later rank's conflicting step ran;
- delay one agent while the others run on (see :mod:`dnsse.advisor.delays`):
  the holder of a contended lock, one caller of an actor that several call,
  the first and the last rank to reach a collective over their way there
  (see :mod:`dnsse.advisor.collectives`);
- crash an actor that declares restarts right after a call of a method that
  changes its state and persisted nothing (see :mod:`dnsse.advisor.actor_calls`):
  the restart loses an update the caller was told had happened;
- try inputs solved to make two ranks decide one comparison apart (see
  :mod:`dnsse.advisor.divergence`), and the boundary values of each bounded
  input, where two ranks most often take different branches.

Hints are ranked by how often the shape they reverse was seen, and the
search's payoff record (see :mod:`dnsse.advisor.ledger`) moves the shapes that
paid off in earlier executions to the front.
"""

from __future__ import annotations

import enum
import itertools
from typing import Iterator

from dnsse.advisor.collectives import collective_delays
from dnsse.advisor.delays import lock_holder_delays, starved_callers
from dnsse.advisor.hints import FaultHint, Hint, InputHint, OperationRef, OrderingHint
from dnsse.advisor.stats import AdvisorStats
from dnsse.advisor.summary import RunSummary, Step

# More windows than this in one program are not worth listing ahead of races.
MAX_WINDOWS = 200


class OfflineAdvisor:
    name = "offline"

    def __init__(self) -> None:
        self._proposed: set[str] = set()
        # The (agent, kind, location) pairs of the races already reversed: a hint says no more than
        # they do, and the advisor is asked after every execution, while thousands of races stand.
        self._reversed: set[tuple] = set()
        self.stats = AdvisorStats()

    def advise(self, summary: RunSummary) -> list[Hint]:
        """New hints for the runs summarized so far, best first; each is proposed once."""
        hints: list[Hint] = []
        races = summary.races()
        hints.extend(_crashes_after_unpersisted_changes(summary))
        hints.extend(_windows(summary))
        hints.extend(collective_delays(summary))
        hints.extend(lock_holder_delays(summary))
        hints.extend(starved_callers(summary))
        for rank, order in enumerate(races):
            first, second = order.first, order.second
            key = (second.agent, second.kind, second.location, first.agent, first.kind, first.location)
            if key in self._reversed:
                continue
            self._reversed.add(key)
            confidence = max(0.1, 0.9 - 0.02 * rank)
            hints.append(
                OrderingHint(
                    (_ref(order.second), _ref(order.first)),
                    confidence,
                    reason=f"reverse: the runs showed only the other order on {order.obj}",
                )
            )
        hints.extend(_diverging_inputs(summary))
        hints.extend(boundary_inputs(summary))
        fresh = []
        for hint in hints:
            key = hint.describe()
            if key not in self._proposed:
                self._proposed.add(key)
                fresh.append(hint)
        self.stats.received += len(fresh)
        return sorted(fresh, key=lambda hint: -hint.confidence)


def _ref(step: Step) -> OperationRef:
    return OperationRef(step.agent, step.kind, step.location)


def _windows(summary: RunSummary) -> list[OrderingHint]:
    """Another agent's conflicting step between two steps of one agent on the same object.

    Agent A reads then writes (or checks then acts on) an object; agent B's
    write of it between the two is the classic lost update or check-then-act,
    whichever order the runs happened to show. Only the first ``MAX_WINDOWS``
    are listed, so the search for them stops there: a program whose pool
    workers touch a few objects many times has tens of thousands, and the
    advisor is asked after every execution.
    """
    return list(itertools.islice(_all_windows(summary), MAX_WINDOWS))


def _all_windows(summary: RunSummary) -> Iterator[OrderingHint]:
    for obj, by_agent in summary.accesses.items():
        for agent, steps in by_agent.items():
            for opening, closing in zip(steps, steps[1:]):
                for other, their_steps in by_agent.items():
                    if other == agent:
                        continue
                    for intruder in their_steps:
                        if intruder.conflicts_with(opening) or intruder.conflicts_with(closing):
                            yield OrderingHint(
                                (_ref(opening), _ref(intruder), _ref(closing)),
                                0.95,
                                reason=f"window: {other} between two accesses of {agent} to {obj}",
                            )


def _crashes_after_unpersisted_changes(summary: RunSummary) -> list[FaultHint]:
    """Crash the actor right after each call that changed its state and persisted nothing.

    Two facts back each of these (the source changes the state, the run saw
    nothing leave the actor) where a window rests on one, so they go first.
    """
    return [
        FaultHint(actor, method, nth, 0.97, reason=f"crash: {actor}'s {method} #{nth} changed state it did not persist")
        for actor, method, nth in sorted(summary.unpersisted, key=lambda call: (call[2], call[0], call[1]))
    ]


def _diverging_inputs(summary: RunSummary) -> list[InputHint]:
    """The solved inputs that make two ranks decide one branch apart (the first input of each model)."""
    hints = []
    for divergence in summary.divergences:
        for name, value in divergence.values:
            valid = summary.inputs[name].validated(value) if name in summary.inputs else None
            if valid is not None:
                first, second = divergence.agents
                reason = f"diverge: {first} and {second} decide {divergence.where} apart"
                hints.append(InputHint(name, valid[0], 0.9, reason=reason))
                break
    return hints


def boundary_inputs(summary: RunSummary) -> list[InputHint]:
    """The ends of each bounded numeric input's range, and every value of a small finite one."""
    hints: list[InputHint] = []
    for spec in summary.inputs.values():
        if spec.domain is None:
            continue
        bounds = getattr(spec.domain, "low", None), getattr(spec.domain, "high", None)
        candidates = list(bounds) if None not in bounds else list(getattr(spec.domain, "values", []))[:8]
        for value in candidates:
            if isinstance(value, enum.Enum):
                value = value.name
            valid = spec.validated(value)
            if valid is not None and valid[0] != spec.default:
                hints.append(InputHint(spec.name, valid[0], 0.3, reason="boundary: an extreme or alternative value of the input"))
    return hints
