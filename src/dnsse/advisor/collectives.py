"""Delays around a collective: the last rank to reach it held back further, the first one made last.

A collective (``all_reduce``, ``barrier``...) is where ranks wait for each
other, so a random schedule reorders the ranks' steps only between two
collectives, and rarely by much: the chance that one rank stays still while
another takes ``n`` steps halves with every step. What a rank does on its way
to a collective (a send, the message an any-source receive takes, a request
to a store) comes after what the others do on theirs only when it arrives
last, and the latest run shows who did:

- the first rank to reach a collective, held back from the first step of its
  way there until no other rank can run: the others' steps go before all of
  its own, and it arrives last;
- the last rank to reach it, held back the same way: it arrives later still,
  after everything the others can do while they wait (their asynchronous
  collectives' transfers, the messages they take).

A rank's way to a collective starts right after its previous collective
(or at its start). Both are delay hints of the shape ``collective``.
"""

from __future__ import annotations

from dnsse.advisor.hints import DelayHint, OperationRef
from dnsse.advisor.summary import RunSummary, Step

MAX_HINTS = 20
# The objects of a collective instance: the n-th collective of a group (see frameworks.torch_dist.collectives).
_PREFIX = "coll:"
# The steps that end a rank's part in a collective, not the start of its way to the next one.
_ENDINGS = (".done", ".issued")


def collective_delays(summary: RunSummary) -> list[DelayHint]:
    """For each collective of the latest run, delay its first and its last arriving rank over their way to it."""
    hints: dict[str, DelayHint] = {}
    for name, arrivals in _arrivals(summary.last_steps):
        if len({step.agent for step, _ in arrivals}) < 2:
            continue
        (first, first_start), (last, last_start) = arrivals[0], arrivals[-1]
        candidates = [
            DelayHint(_ref(first_start), 0.92, reason=f"collective: the other ranks reach {name} before {first.agent}"),
            DelayHint(_ref(last_start), 0.88, reason=f"collective: {last.agent}, the last to reach {name}, later still"),
        ]
        for hint in candidates:
            hints.setdefault(hint.describe(), hint)
    return sorted(hints.values(), key=lambda hint: -hint.confidence)[:MAX_HINTS]


def _arrivals(steps: list[Step]) -> list[tuple[str, list[tuple[Step, Step]]]]:
    """Each collective, in the order it was first reached, with (arrival, first step of the way there) per rank.

    An arrival is a rank's own step on the collective (a transfer of an
    asynchronous one, ``all_reduce.read``, is another agent's and does not count).
    """
    by_collective: dict[str, list[tuple[Step, Step]]] = {}
    way_starts: dict[str, Step] = {}  # agent -> the first step after its previous arrival
    for step in steps:
        if not step.kind.endswith(_ENDINGS):
            way_starts.setdefault(step.agent, step)
        name = _collective_of(step)
        if name is None:
            continue
        by_collective.setdefault(name, []).append((step, way_starts.pop(step.agent)))
    return list(by_collective.items())


def _collective_of(step: Step) -> str | None:
    if "." in step.kind:
        return None
    for name, access in step.objects:
        if name.startswith(_PREFIX) and "#" in name and access == "sync":
            return name.removeprefix(_PREFIX)
    return None


def _ref(step: Step) -> OperationRef:
    return OperationRef(step.agent, step.kind, step.location)
