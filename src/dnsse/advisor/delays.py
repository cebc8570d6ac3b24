"""Delays worth trying: one agent held back at one operation while the others run on.

Random schedules rarely hold one agent still for long: the chance that the
others take ``n`` steps in a row halves with every step. Some bugs need just
that, and the latest run shows where:

- the holder of a contended lock (one that two or more agents take), held
  back right after it took the lock: the others run up to the lock, and take
  whatever else they take first (a lock-order deadlock, a timed-out waiter);
- one caller of an actor that several agents call, starved: its calls go
  only when no other caller can run, so the others' calls all go first.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from dnsse.advisor.hints import DelayHint, OperationRef
from dnsse.advisor.summary import RunSummary, Step

MAX_PER_HEURISTIC = 20


def lock_holder_delays(summary: RunSummary) -> list[DelayHint]:
    """Hold each agent at its step right after it took a lock that another agent takes too."""
    steps = summary.last_steps
    takers: dict[str, set[str]] = defaultdict(set)
    for step in steps:
        if step.kind == "lock.acquire":
            for name, _ in step.objects:
                takers[name].add(step.agent)
    hints: dict[str, DelayHint] = {}
    following_of = _following_steps(steps)
    for index, step in enumerate(steps):
        if step.kind != "lock.acquire":
            continue
        contended = [name for name, _ in step.objects if len(takers[name]) > 1]
        following = following_of[index]
        if contended and following is not None:
            hint = DelayHint(
                _ref(following), 0.9,
                reason=f"holder: {step.agent} holds {contended[0]}, which other agents take too",
            )
            hints.setdefault(hint.describe(), hint)
    return list(hints.values())[:MAX_PER_HEURISTIC]


def starved_callers(summary: RunSummary) -> list[DelayHint]:
    """Starve each caller of an actor that two or more agents call, at each place it calls it.

    A place the caller calls from again and again (a loop) goes first:
    starving it there lets the other callers' calls pile up between its own,
    where starving a one-off call only postpones it.
    """
    callers: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for step in summary.last_steps:
        if step.kind == "actor.submit":
            for name, _ in step.objects:
                callers[name][step.agent][step.location] += 1
    hints = []
    for actor, by_caller in callers.items():
        if len(by_caller) < 2:
            continue
        for caller, locations in by_caller.items():
            for location, times in locations.items():
                confidence = 0.85 if times > 1 else 0.6
                hints.append(
                    DelayHint(
                        OperationRef(caller, "actor.submit", location), confidence,
                        reason=f"starve: {caller}'s calls of {actor} go after the other callers'",
                    )
                )
    return sorted(hints, key=lambda hint: -hint.confidence)[:MAX_PER_HEURISTIC]


def _following_steps(steps: list[Step]) -> list[Step | None]:
    """For each step, the next step of the same agent (None: its last), in one pass over a long run."""
    following: list[Step | None] = [None] * len(steps)
    latest: dict[str, Step] = {}
    for index in range(len(steps) - 1, -1, -1):
        step = steps[index]
        following[index] = latest.get(step.agent)
        latest[step.agent] = step
    return following


def _ref(step: Step) -> OperationRef:
    return OperationRef(step.agent, step.kind, step.location)
