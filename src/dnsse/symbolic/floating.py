"""The same queries in IEEE floating point, for where real arithmetic is not the program's.

Real arithmetic misses what rounding does: ``x + 1e16 == x`` has no real
solution but holds for every double beyond about 1e32, and a float16
product is ``inf`` (so above 65504) from 65520 on, not from 65504. When a
real model does not confirm on re-execution, or the real query has no
solution, the query is asked again here with every real-valued term in
z3's floating-point theory: Python arithmetic in Float64, and each result a
tensor computed in a narrower dtype rounded to that dtype (the
``rounding`` of the execution's :class:`~dnsse.symbolic.values.PathLog`).
Integer inputs become integral Float64 values; an operation this
translation does not know (integer ``//`` and ``%``) makes the query
unsupported, and the caller counts it.
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction
from typing import Any, Sequence

import z3

from dnsse.symbolic.fresh import fresh_answer

SORTS = {"float64": z3.Float64(), "float32": z3.Float32(), "float16": z3.Float16(), "bfloat16": z3.FPSort(8, 8)}
_WIDE = z3.Float64()
_RM = z3.RNE()


class Unsupported(Exception):
    """The expression uses an operation that has no floating-point translation here."""


class Undecided(Exception):
    """z3 found neither values nor that there are none, within the query's time."""


class _Translation:
    def __init__(self, rounding: dict[int, tuple[Any, str]]) -> None:
        self.rounding = rounding
        self.variables: dict[str, tuple[Any, bool]] = {}  # name -> (FP variable, integral)
        self.cache: dict[int, Any] = {}

    def boolean(self, expr: Any) -> Any:
        if z3.is_true(expr) or z3.is_false(expr):
            return expr
        kind = expr.decl().kind()
        children = expr.children()
        if kind == z3.Z3_OP_NOT:
            return z3.Not(self.boolean(children[0]))
        if kind == z3.Z3_OP_AND:
            return z3.And(*[self.boolean(c) for c in children])
        if kind == z3.Z3_OP_OR:
            return z3.Or(*[self.boolean(c) for c in children])
        compare = {
            z3.Z3_OP_LT: z3.fpLT, z3.Z3_OP_LE: z3.fpLEQ, z3.Z3_OP_GT: z3.fpGT, z3.Z3_OP_GE: z3.fpGEQ,
            z3.Z3_OP_EQ: z3.fpEQ, z3.Z3_OP_DISTINCT: z3.fpNEQ,
        }.get(kind)
        if compare is None or len(children) != 2 or z3.is_bool(children[0]):
            raise Unsupported(str(expr.decl()))
        # Comparing values of two dtypes widens both, as Python and torch do: exactly.
        return compare(self._wide(children[0]), self._wide(children[1]))

    def _wide(self, expr: Any) -> Any:
        return z3.fpToFP(_RM, self.number(expr), _WIDE)

    def number(self, expr: Any) -> Any:
        key = expr.get_id()
        if key not in self.cache:
            self.cache[key] = self._number(expr)
        return self.cache[key]

    def _number(self, expr: Any) -> Any:
        sort = SORTS[self.rounding[expr.get_id()][1]] if expr.get_id() in self.rounding else _WIDE
        if z3.is_int_value(expr):
            return z3.FPVal(float(expr.as_long()), sort)
        if z3.is_rational_value(expr):
            return z3.FPVal(float(Fraction(expr.numerator_as_long(), expr.denominator_as_long())), sort)
        if z3.is_const(expr) and expr.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            name = expr.decl().name()
            if name not in self.variables:
                self.variables[name] = (z3.FP(name, _WIDE), z3.is_int(expr))
            return z3.fpToFP(_RM, self.variables[name][0], sort)
        kind = expr.decl().kind()
        children = expr.children()
        if kind in (z3.Z3_OP_TO_REAL, z3.Z3_OP_TO_INT):
            return self.number(children[0])
        if kind == z3.Z3_OP_ITE:
            return z3.If(self.boolean(children[0]), self._in(children[1], sort), self._in(children[2], sort))
        if kind == z3.Z3_OP_UMINUS:
            return z3.fpNeg(self._in(children[0], sort))
        operation = {
            z3.Z3_OP_ADD: z3.fpAdd, z3.Z3_OP_SUB: z3.fpSub, z3.Z3_OP_MUL: z3.fpMul, z3.Z3_OP_DIV: z3.fpDiv,
        }.get(kind)
        if operation is None or not children:
            raise Unsupported(str(expr.decl()))
        result = self._in(children[0], sort)
        for child in children[1:]:
            result = operation(_RM, result, self._in(child, sort))
        return result

    def _in(self, expr: Any, sort: Any) -> Any:
        """``expr`` computed as it is, then rounded to ``sort``, where its result is used."""
        return z3.fpToFP(_RM, self.number(expr), sort)


def solve_fp(
    conditions: Sequence[Any],
    bounds: Sequence[Any],
    rounding: dict[int, tuple[Any, str]],
    timeout_ms: int,
) -> dict[str, int | float] | None:
    """Values meeting every boolean of ``conditions`` and ``bounds`` in floating point; ``None`` if none found.

    Raises :class:`Unsupported` when an expression cannot be translated, :class:`Undecided` when z3 ran
    out of time.
    """
    translation = _Translation(rounding)
    assertions = [translation.boolean(condition) for condition in list(conditions) + list(bounds)]
    for variable, integral in translation.variables.values():
        assertions += [z3.Not(z3.fpIsNaN(variable)), z3.Not(z3.fpIsInf(variable))]
        if integral:
            assertions.append(z3.fpEQ(z3.fpRoundToIntegral(z3.RTZ(), variable), variable))
    answer, model = fresh_answer(assertions, timeout_ms)
    if answer == z3.unknown:
        raise Undecided
    if model is None:
        return None
    values: dict[str, int | float] = {}
    for name, (variable, integral) in translation.variables.items():
        bits = model.eval(z3.fpToIEEEBV(variable.translate(model.ctx), model.ctx), model_completion=True).as_long()
        value = struct.unpack("<d", struct.pack("<Q", bits))[0]
        if math.isfinite(value):
            values[name] = int(value) if integral else value
    return values
