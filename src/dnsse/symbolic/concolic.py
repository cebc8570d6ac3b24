"""The concolic stand-ins of one execution's inputs, and the z3 variables behind them.

Every explored int, float or tensor input becomes a concolic value whose
expression is a z3 variable named after the input (``scale``, ``grad[3]``
for a tensor element), bounded by its domain. bool, Literal and enum inputs
stay plain: their few values are enumerated by mutation instead.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import z3

from dnsse.engine.inputs import Domain, FloatDomain, InputParameter, IntDomain, TensorDomain
from dnsse.symbolic.values import PathLog, make


def variable_name(parameter: InputParameter, element: int) -> str:
    if isinstance(parameter.domain, TensorDomain):
        return f"{parameter.name}[{element}]"
    return parameter.name


def _parts(parameter: InputParameter) -> list[Domain]:
    domain = parameter.domain
    if isinstance(domain, TensorDomain):
        return list(domain.elements)
    return [domain] if isinstance(domain, (IntDomain, FloatDomain)) else []


def variable(parameter: InputParameter, element: int) -> Any:
    name = variable_name(parameter, element)
    return z3.Int(name) if isinstance(_parts(parameter)[element], IntDomain) else z3.Real(name)


def bounds(parameters: Sequence[InputParameter]) -> list[Any]:
    """The domains of the concolic inputs as z3 constraints on their variables."""
    found = []
    for parameter in parameters:
        for element, part in enumerate(_parts(parameter)):
            var = variable(parameter, element)
            if math.isfinite(part.low):
                found.append(var >= _number(part.low))
            if math.isfinite(part.high):
                found.append(var <= _number(part.high))
    return found


def _number(value: float) -> Any:
    return z3.IntVal(value) if isinstance(value, int) else z3.RealVal(value)


class Concolic:
    """Makes one execution's concolic inputs (a chooser's ``input_value``) and keeps their log."""

    def __init__(self) -> None:
        self.log = PathLog()

    def input_value(self, parameter: InputParameter, value: object) -> object:
        parts = _parts(parameter)
        if not parts:
            return value
        if isinstance(parameter.domain, TensorDomain):
            from dnsse.symbolic.tensors import SymTensor

            sym = [z3.ToReal(v) if z3.is_int(v) else v for v in (variable(parameter, i) for i in range(len(parts)))]
            return SymTensor.wrap(value, sym, self.log)  # type: ignore[arg-type]
        return make(value, variable(parameter, 0), self.log)
