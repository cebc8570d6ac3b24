"""What an advisor may say, and the one gate every answer passes.

A hint is a prediction to try first: an ordering of two operations, a delay
(hold one agent back at an operation while the others run on), a value for an
input, or a fault (crash an actor right after one of its calls). Whoever made it (the offline heuristics or a language
model), it enters the search only through :func:`parse_hints`, which checks it
against what the runs have shown: an agent, operation or location that no run
has seen is discarded and counted, never guessed at. Text from a model is data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Union

from dnsse.advisor.summary import RunSummary

# A model answer larger than this is not read at all.
MAX_HINTS = 50
MAX_TEXT = 200
MAX_SEQUENCE = 6


@dataclass(frozen=True, slots=True)
class OperationRef:
    """One operation of one agent, as the runs named it.

    ``occurrence`` (1-based) picks the n-th time the agent performs a matching
    operation; ``None`` matches every time.
    """

    agent: str
    kind: str | None = None
    location: str | None = None
    occurrence: int | None = None

    def matches(self, agent: str, kind: str, location: str | None) -> bool:
        return (
            agent == self.agent
            and (self.kind is None or kind == self.kind)
            and (self.location is None or location == self.location)
        )

    def describe(self) -> str:
        nth = f" #{self.occurrence}" if self.occurrence is not None else ""
        what = self.kind or "step"
        where = f" at {self.location}" if self.location else ""
        return f"{self.agent}'s {what}{nth}{where}"


@dataclass(frozen=True, slots=True)
class OrderingHint:
    """The operations of ``sequence`` run in that order.

    Two operations say "a before b"; three say "b between a and c" (worker 2's
    push between worker 1's read and write of the weights). The search holds
    back any agent about to perform a later operation of the sequence until the
    earlier ones ran.
    """

    sequence: tuple[OperationRef, ...]
    confidence: float
    source: str = "offline"
    reason: str = ""

    def describe(self) -> str:
        return " before ".join(ref.describe() for ref in self.sequence)


@dataclass(frozen=True, slots=True)
class InputHint:
    """Try ``name`` = ``value``."""

    name: str
    value: object
    confidence: float
    source: str = "offline"
    reason: str = ""

    def describe(self) -> str:
        return f"input {self.name} = {self.value!r}"


@dataclass(frozen=True, slots=True)
class DelayHint:
    """Hold ``at.agent`` back whenever it is about to perform ``at``, as long as another agent can run.

    The holder of a contended lock delayed inside its critical section, one
    caller of an actor starved while the others' calls go first, the last rank
    to reach a collective held back further.
    """

    at: OperationRef
    confidence: float
    source: str = "offline"
    reason: str = ""

    def describe(self) -> str:
        return f"delay {self.at.describe()}"


@dataclass(frozen=True, slots=True)
class FaultHint:
    """Crash ``actor`` at its first fault point after its ``after``-th call of ``method`` ran.

    The actor must declare restarts (the runs saw it asked whether to crash);
    the point right after a call is the next call's start, so the crash loses
    whatever that call changed and did not persist.
    """

    actor: str
    method: str
    after: int
    confidence: float
    source: str = "offline"
    reason: str = ""

    def describe(self) -> str:
        return f"crash {self.actor} after its call #{self.after} of {self.method}"


Hint = Union[OrderingHint, DelayHint, InputHint, FaultHint]


@dataclass
class ParsedHints:
    hints: list[Hint] = field(default_factory=list)
    # Why each discarded item was refused, e.g. "hint 3: no agent named 'rank 7'".
    discarded: list[str] = field(default_factory=list)


class _Refused(Exception):
    pass


def parse_hints(raw: object, summary: RunSummary, source: str) -> ParsedHints:
    """The valid hints of ``raw`` (a decoded JSON answer: ``{"hints": [...]}``).

    Every item is checked against ``summary``: the agents, operation kinds and
    locations it names must have been seen, input names must be inputs of the
    entry point and values of their type and range, confidences finite in [0, 1].
    """
    parsed = ParsedHints()
    if not isinstance(raw, dict) or not isinstance(raw.get("hints"), list):
        parsed.discarded.append('the answer is not an object with a "hints" list')
        return parsed
    items = raw["hints"]
    if len(items) > MAX_HINTS:
        parsed.discarded.append(f"{len(items) - MAX_HINTS} hints past the first {MAX_HINTS} ignored")
        items = items[:MAX_HINTS]
    for number, item in enumerate(items, start=1):
        try:
            parsed.hints.append(_parse_one(item, summary, source))
        except _Refused as why:
            parsed.discarded.append(f"hint {number}: {why}")
    return parsed


def _parse_one(item: object, summary: RunSummary, source: str) -> Hint:
    if not isinstance(item, dict):
        raise _Refused("not an object")
    confidence = _confidence(item.get("confidence", 0.5))
    reason = item.get("reason")
    reason = reason[:MAX_TEXT] if isinstance(reason, str) else ""
    kind = item.get("type")
    if kind == "ordering":
        raw_sequence = item.get("sequence")
        if not isinstance(raw_sequence, list) or not 2 <= len(raw_sequence) <= MAX_SEQUENCE:
            raise _Refused(f"an ordering needs a 'sequence' of 2 to {MAX_SEQUENCE} operations")
        sequence = tuple(_operation(raw, summary, f"sequence[{i}]") for i, raw in enumerate(raw_sequence))
        if len({ref.agent for ref in sequence}) < 2:
            raise _Refused("an ordering of one agent's own steps is already fixed by the program")
        return OrderingHint(sequence, confidence, source, reason)
    if kind == "delay":
        return DelayHint(_operation(item.get("at"), summary, "at"), confidence, source, reason)
    if kind == "input":
        name = _text(item.get("name"), "name")
        if name not in summary.inputs:
            raise _Refused(f"no input named {name!r}")
        value = summary.inputs[name].validated(item.get("value"))
        if value is None:
            raise _Refused(f"value {item.get('value')!r} does not fit input {name!r}")
        return InputHint(name, value[0], confidence, source, reason)
    if kind == "fault":
        actor = _text(item.get("actor"), "actor")
        if actor not in summary.restartable:
            raise _Refused(f"no actor named {actor!r} that may crash (one that declares max_restarts)")
        method = _text(item.get("method"), "method")
        if method not in summary.methods_of(actor):
            raise _Refused(f"{actor!r} ran no call of {method!r}")
        after = item.get("after")
        if not isinstance(after, int) or isinstance(after, bool) or not 1 <= after <= 100_000:
            raise _Refused(f"after must be a positive integer, got {after!r}")
        return FaultHint(actor, method, after, confidence, source, reason)
    raise _Refused(f"unknown type {kind!r} (ordering, delay, input or fault)")


def _operation(raw: object, summary: RunSummary, role: str) -> OperationRef:
    if not isinstance(raw, dict):
        raise _Refused(f"{role!r} must be an object with an agent")
    agent = _agent(raw.get("agent"), summary)
    kind = _text(raw.get("operation"), "operation", optional=True)
    location = _text(raw.get("location"), "location", optional=True)
    # A kind or a line the runs have not shown this agent at yet may still be one it reaches
    # in another schedule: a kind some agent performs, a line of the program's code, are real.
    if kind is not None and kind not in summary.kinds_of(agent) and kind not in summary.all_kinds():
        raise _Refused(f"no agent performs {kind!r}")
    if location is not None and location not in summary.locations_of(agent) and not summary.is_code_line(location):
        raise _Refused(f"{agent!r} never reaches a scheduling point at {location!r}, and it is no line of code")
    occurrence = raw.get("occurrence")
    if occurrence is not None and (
        not isinstance(occurrence, int) or isinstance(occurrence, bool) or not 1 <= occurrence <= 100_000
    ):
        raise _Refused(f"occurrence must be a positive integer, got {occurrence!r}")
    return OperationRef(agent, kind, location, occurrence)


def _agent(raw: object, summary: RunSummary) -> str:
    agent = _text(raw, "agent")
    if agent not in summary.agents:
        raise _Refused(f"no agent named {agent!r}")
    return agent


def _text(raw: object, what: str, optional: bool = False) -> str | None:
    if raw is None and optional:
        return None
    if not isinstance(raw, str) or not raw or len(raw) > MAX_TEXT:
        raise _Refused(f"{what} must be a non-empty string of at most {MAX_TEXT} characters")
    return raw


def _confidence(raw: object) -> float:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw) or not 0 <= raw <= 1:
        raise _Refused(f"confidence must be a number in [0, 1], got {raw!r}")
    return float(raw)
