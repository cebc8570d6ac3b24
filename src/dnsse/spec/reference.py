"""The finite-trace semantics of specifications, evaluated directly.

This is the definition the monitor is tested against: slow (it recurses over
positions) and obviously right. A trace is a list of positions, each a list
of events; position ``i == len(trace)`` is the empty rest of a finished run,
where atoms are false, strong obligations (``X F U``) fail, weak ones
(``G R W``) hold, and past operators read their start values (``H`` holds,
``Y O S`` do not), as on an empty trace.
"""

from __future__ import annotations

from typing import Sequence

from dnsse.spec.automaton import EventLike, field_matches
from dnsse.spec.syntax import Atom, Binary, Const, Formula, Unary

def holds(formula: Formula, trace: Sequence[Sequence[EventLike]], i: int = 0) -> bool:
    """Whether ``formula`` holds at position ``i`` of the finished ``trace``."""
    n = len(trace)
    if isinstance(formula, Const):
        return formula.value
    if isinstance(formula, Atom):
        return i < n and any(_matches(formula, event) for event in trace[i])
    if isinstance(formula, Unary):
        op, a = formula.op, formula.operand
        if op == "!":
            return not holds(a, trace, i)
        if op == "X":
            return i + 1 < n and holds(a, trace, i + 1)
        if op == "F":
            return any(holds(a, trace, j) for j in range(i, n))
        if op == "G":
            return all(holds(a, trace, j) for j in range(i, n))
        if i >= n:
            return op == "H"
        if op == "Y":
            return i > 0 and holds(a, trace, i - 1)
        if op == "O":
            return any(holds(a, trace, j) for j in range(i + 1))
        if op == "H":
            return all(holds(a, trace, j) for j in range(i + 1))
        raise ValueError(f"unknown unary operator {op}")
    assert isinstance(formula, Binary)
    op, a, b = formula.op, formula.left, formula.right
    if op == "&":
        return holds(a, trace, i) and holds(b, trace, i)
    if op == "|":
        return holds(a, trace, i) or holds(b, trace, i)
    if op == "->":
        return not holds(a, trace, i) or holds(b, trace, i)
    if op == "<->":
        return holds(a, trace, i) == holds(b, trace, i)
    if op == "U":
        return any(holds(b, trace, k) and all(holds(a, trace, j) for j in range(i, k)) for k in range(i, n))
    if op == "W":
        return holds(Binary("U", a, b), trace, i) or all(holds(a, trace, j) for j in range(i, n))
    if op == "R":
        # b holds up to and including the first position where a holds, or forever.
        return all(holds(b, trace, k) or any(holds(a, trace, j) for j in range(i, k)) for k in range(i, n))
    if op == "S":
        if i >= n:
            return False
        return any(holds(b, trace, k) and all(holds(a, trace, j) for j in range(k + 1, i + 1)) for k in range(i + 1))
    raise ValueError(f"unknown binary operator {op}")


def _matches(atom: Atom, event: EventLike) -> bool:
    if event.name != atom.name:
        return False
    return all(key in event.fields and field_matches(event.fields[key], value) for key, value in atom.tests)
