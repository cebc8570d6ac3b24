"""Shrink a bug's input values, as Hypothesis shrinks the numbers it drew.

The schedule's minimization (:mod:`dnsse.search.minimize`) only knows an
input's default and "anything else". A person reads the value, so it should
be the simplest one that still shows the bug, in this order of simplicity
(:func:`simplicity`): integers before floats (a float with an integral
value before one with a fraction, finite before infinite or NaN), then
closer to the input's default, then fewer bits. For a program that fails
for every ``tokens <= 1000`` with a default of 1500, the shrunk value is
the boundary ``1000``, whichever value the search happened to find.

Each input is shrunk in turn (ints first): the default's next neighbours
and a few small values, a whole number for a fraction, then a bisection of the
distance to the default, on the side the found value lies (integers for an
integral value, floats one ulp apart otherwise). A value is kept only when
its run shows the same bug; the bisection assumes that the values between
the default and a failing one fail from some distance on, as boundaries do,
and keeps the best failing value it ran even where they do not.
"""

from __future__ import annotations

import math
import re
from typing import Callable

from dnsse.engine.bugs import Bug, BugKind
from dnsse.engine.choices import ChoiceKind
from dnsse.engine.inputs import FloatDomain, InputSlot, IntDomain, ListDomain, float_from_order, float_order
from dnsse.engine.runner import ExecutionResult

# Runs a value change: the reproducing run with the input choice at ``position`` set to ``index``, or None.
TryIndex = Callable[[ExecutionResult, int, int], "ExecutionResult | None"]

SIMPLE_INTS = (0, 1, -1, 2, -2)

# Numbers in a bug's message (``573 tokens``, ``float32[5]``, ``1e+300``): they change with the inputs.
_NUMBER = re.compile(r"-?(?:\d+\.?\d*(?:e[+-]?\d+)?|inf|nan)")
# Where a traceback's innermost frame stands.
_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def is_same_failure(bug: Bug, other: Bug) -> bool:
    """Whether two bugs are one failure shown with other values, as Hypothesis compares failures.

    The same kind and the same message with its numbers masked; for an
    exception, the same type raised at the same line.
    """
    if bug.kind != other.kind or _NUMBER.sub("#", bug.message) != _NUMBER.sub("#", other.message):
        if bug.kind != BugKind.EXCEPTION or bug.message.split(":")[0] != other.message.split(":")[0]:
            return False
    return bug.kind != BugKind.EXCEPTION or _raised_at(bug) == _raised_at(other)


def _raised_at(bug: Bug) -> tuple[str, str] | None:
    frames = [match.groups() for detail in bug.details for match in _FRAME.finditer(detail)]
    return frames[-1] if frames else None


def simplicity(value: object, default: object) -> tuple:
    """The order in which values are simpler: smaller is simpler (see the module's docstring)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return (0,)
    if isinstance(value, float):
        if not math.isfinite(value):
            return (3, 0.0, 0)
        tier = 1 if value.is_integer() else 2
        return (tier, abs(value - float(default)), _bits(value), value < 0)  # type: ignore[arg-type]
    return (0, abs(value - default), abs(value).bit_length(), value < 0)  # type: ignore[operator]


def _bits(value: float) -> int:
    """How many significant bits the float's mantissa takes."""
    mantissa, _ = math.frexp(abs(value))
    bits = 0
    while mantissa and bits < 60:
        mantissa = mantissa * 2 - int(mantissa * 2)
        bits += 1
    return bits


def shrink_inputs(best: ExecutionResult, try_index: TryIndex, budget_left: Callable[[], bool]) -> ExecutionResult:
    """``best`` with each input value as simple as a run that shows the same bug allows."""
    slots = list(best.slots)
    order = sorted(range(len(slots)), key=lambda k: isinstance(slots[k].domain, FloatDomain))
    for k in order:
        if budget_left():
            best = _shrink_one(best, k, slots[k], try_index, budget_left)
    return best


def _position(result: ExecutionResult, k: int) -> int | None:
    positions = [i for i, choice in enumerate(result.choices) if choice.kind == ChoiceKind.INPUT]
    return positions[k] if len(positions) == len(result.slots) else None


def _shrink_one(
    best: ExecutionResult, k: int, slot: InputSlot, try_index: TryIndex, budget_left: Callable[[], bool]
) -> ExecutionResult:
    domain = slot.domain
    default = domain.value_of([0])
    current_position = _position(best, k)
    if current_position is None:
        return best
    current = domain.value_of([best.choices[current_position].index])

    def better(value: object) -> bool:
        """Run ``value`` if it is simpler than the current one; keep it when the bug shows."""
        nonlocal best, current
        if not budget_left() or simplicity(value, default) >= simplicity(current, default):
            return False
        position = _position(best, k)
        found = domain.index_of(value)
        if position is None or found is None:
            return False
        shown = try_index(best, position, found[0])
        if shown is None:
            return False
        best, current = shown, value
        return True

    if isinstance(domain, ListDomain):
        for index in range(domain.widths()[0]):
            if better(domain.value_of([index])):
                break
        return best
    if not isinstance(domain, (IntDomain, FloatDomain)):
        return best
    # The default, its next neighbours, then small values: the nearest of them that fails, if any.
    nearby = [default, *(default + step for step in (1, -1, 2, -2)), *SIMPLE_INTS]  # type: ignore[operator]
    for value in sorted(nearby, key=lambda v: simplicity(v, default)):
        better(float(value) if isinstance(domain, FloatDomain) else value)
    if isinstance(domain, FloatDomain) and isinstance(current, float) and math.isfinite(current):
        if not current.is_integer():
            toward, away = (math.floor(current), math.ceil(current)) if current > default else (math.ceil(current), math.floor(current))
            better(float(toward)) or better(float(away))
    if isinstance(current, int) and not isinstance(current, bool):
        _bisect_ints(current, default, lambda v: better(v))  # type: ignore[arg-type]
    elif isinstance(current, float) and math.isfinite(current):
        if current.is_integer() and float(default).is_integer() and abs(current) < 2**53:
            _bisect_ints(int(current), int(default), lambda v: better(float(v)))  # type: ignore[arg-type]
        else:
            _bisect_floats(current, float(default), better)  # type: ignore[arg-type]
            if not current.is_integer():
                rounded = math.floor(current) if current > default else math.ceil(current)
                better(float(rounded)) or better(float(rounded + (1 if current > default else -1)))
    return best


def _bisect_ints(failing: int, default: int, fails: Callable[[int], bool]) -> None:
    """Bisect the distance from ``default`` to ``failing`` for the closest value that still fails."""
    side = 1 if failing > default else -1
    passing, known = 0, abs(failing - default)
    while known - passing > 1:
        middle = (passing + known) // 2
        if fails(default + side * middle):
            known = middle
        else:
            passing = middle


def _bisect_floats(failing: float, default: float, fails: Callable[[float], bool]) -> None:
    """As :func:`_bisect_ints`, over the floats between ``default`` and ``failing`` (ulp by ulp)."""
    start, end = float_order(default), float_order(failing)
    side = 1 if end > start else -1
    passing, known = 0, abs(end - start)
    while known - passing > 1:
        middle = (passing + known) // 2
        if fails(float_from_order(start + side * middle)):
            known = middle
        else:
            passing = middle
