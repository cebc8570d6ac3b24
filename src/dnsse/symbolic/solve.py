"""Solving for inputs that take the other side of a recorded condition.

A query is the path prefix (the conditions an execution met before the
target one, each as it came out), the target condition negated, and the
bounds of every input. Integer and real arithmetic come first, as the issue
of floating point is left to re-execution: the campaign runs the model and
checks that the branch really flips.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

import z3

from dnsse.symbolic.fresh import fresh_model
from dnsse.symbolic.values import Condition

QUERY_TIMEOUT_MS = 2000


@dataclass
class Query:
    prefix: list[Condition]
    target: Condition


def solve(query: Query, bounds: Sequence[Any], timeout_ms: int = QUERY_TIMEOUT_MS) -> dict[str, int | float] | None:
    """Values of the input variables that meet the prefix and flip the target; ``None`` when unsat or unknown."""
    assertions = [condition.expr if condition.taken else z3.Not(condition.expr) for condition in query.prefix]
    assertions.append(z3.Not(query.target.expr) if query.target.taken else query.target.expr)
    model = fresh_model(assertions + list(bounds), timeout_ms)
    if model is None:
        return None
    values: dict[str, int | float] = {}
    for declaration in model.decls():
        value = model[declaration]
        if z3.is_int_value(value):
            values[declaration.name()] = value.as_long()
        elif z3.is_rational_value(value):
            values[declaration.name()] = float(Fraction(value.numerator_as_long(), value.denominator_as_long()))
        elif z3.is_algebraic_value(value):
            values[declaration.name()] = float(value.approx(20).as_fraction())
    return values
