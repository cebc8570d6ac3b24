"""Concolic tensors: small tensors whose elements carry z3 expressions.

A :class:`SymTensor` is a real ``torch.Tensor`` (a subclass, so every torch
function accepts it) with one expression per element. Torch functions that
see a concolic number or tensor among their arguments land in
:func:`torch_function`: elementwise arithmetic, ``abs``/``neg``, the
reductions ``sum``/``mean``/``max``/``min`` (whole tensor), comparisons,
``item()``, ``float(t)``, ``bool(t)`` and ``int(t)`` keep expressions; any
other function computes its plain result and counts a concretisation. An
in-place function drops the expressions of the tensor it changes, since its
new contents come from outside the model (a collective, a copy).

Only tensors of at most :data:`MAX_ELEMENTS` elements are tracked, so the
cost stays proportional to what a solver can take anyway.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import torch
import z3

from dnsse.symbolic.values import PathLog, SymFloat, SymInt, expression_of, log_of, make

MAX_ELEMENTS = 64

_ELEMENTWISE: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b,
    "__add__": lambda a, b: a + b,
    "__radd__": lambda a, b: b + a,
    "sub": lambda a, b: a - b,
    "__sub__": lambda a, b: a - b,
    "__rsub__": lambda a, b: b - a,
    "mul": lambda a, b: a * b,
    "__mul__": lambda a, b: a * b,
    "__rmul__": lambda a, b: b * a,
    "div": lambda a, b: a / b,
    "true_divide": lambda a, b: a / b,
    "__truediv__": lambda a, b: a / b,
    "__rtruediv__": lambda a, b: b / a,
}
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "gt": lambda a, b: a > b, "__gt__": lambda a, b: a > b,
    "lt": lambda a, b: a < b, "__lt__": lambda a, b: a < b,
    "ge": lambda a, b: a >= b, "__ge__": lambda a, b: a >= b,
    "le": lambda a, b: a <= b, "__le__": lambda a, b: a <= b,
    "eq": lambda a, b: a == b, "__eq__": lambda a, b: a == b,
    "ne": lambda a, b: a != b, "__ne__": lambda a, b: a != b,
}
_UNARY: dict[str, Callable[[Any], Any]] = {
    "abs": lambda a: z3.If(a < 0, -a, a),
    "__abs__": lambda a: z3.If(a < 0, -a, a),
    "neg": lambda a: -a,
    "__neg__": lambda a: -a,
    "clone": lambda a: a,
    "detach": lambda a: a,
    "float": lambda a: a,
    "to": lambda a: a,
    "flatten": lambda a: a,
    "reshape": lambda a: a,
    "view": lambda a: a,
    "contiguous": lambda a: a,
}


# Float dtypes narrower than a Python float: results in them round (see dnsse.symbolic.floating).
_NARROW = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}


class SymTensor(torch.Tensor):
    """A tensor with one z3 expression per element (``sym``), flattened in row-major order."""

    sym: list[Any] | None
    log: PathLog

    @staticmethod
    def wrap(plain: torch.Tensor, sym: list[Any], log: PathLog) -> torch.Tensor:
        if plain.numel() != len(sym) or plain.numel() > MAX_ELEMENTS:
            return plain
        narrow = _NARROW.get(plain.dtype)
        if narrow is not None:
            for expr in sym:
                # An input itself (a variable) keeps its value; what is computed from it is rounded.
                if expr is not None and not z3.is_bool(expr) and not z3.is_const(expr):
                    log.rounding[expr.get_id()] = (expr, narrow)
        tensor = plain.as_subclass(SymTensor)
        tensor.sym, tensor.log = sym, log
        return tensor

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        return torch_function(func, args, kwargs or {})


def _plain(value: object) -> object:
    if isinstance(value, SymTensor):
        return value.as_subclass(torch.Tensor)
    if isinstance(value, (SymInt, SymFloat)):
        return value._plain()
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v) for v in value)
    return value


def _elements(value: object, count: int) -> list[Any] | None:
    """Per-element expressions of an operand broadcast to ``count`` elements (scalars repeat)."""
    if isinstance(value, SymTensor):
        sym = getattr(value, "sym", None)
        if sym is None:
            return None
        if len(sym) == count:
            return sym
        return sym * count if len(sym) == 1 else None
    if isinstance(value, torch.Tensor):
        if value.numel() == count:
            return [_literal(x) for x in value.flatten().tolist()]
        if value.numel() == 1:
            return [_literal(value.item())] * count
        return None
    expr = expression_of(value)
    return None if expr is None else [_real(expr)] * count


def _literal(x: object) -> Any:
    if isinstance(x, bool):
        return z3.BoolVal(x)
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return z3.RealVal(x) if isinstance(x, float) else z3.IntVal(x)


def _real(expr: Any) -> Any:
    return z3.ToReal(expr) if expr is not None and z3.is_int(expr) else expr


def _tracked(args: tuple, kwargs: dict) -> bool:
    return any(isinstance(a, (SymTensor, SymInt, SymFloat)) for a in (*args, *kwargs.values()))


def torch_function(func: Callable, args: tuple, kwargs: dict) -> object:
    """Run ``func`` on plain values; give the result expressions when the model covers it."""
    log = log_of(*args, *kwargs.values())
    name = getattr(func, "__name__", "")
    with torch._C.DisableTorchFunctionSubclass():
        result = func(*_plain(args), **{k: _plain(v) for k, v in kwargs.items()})
    if log is None or not _tracked(args, kwargs):
        return result
    if name.endswith("_") and not name.startswith("__") or "out" in kwargs:
        target = args[0] if args else None
        if isinstance(target, SymTensor):
            target.sym = None  # its contents now come from outside the model
        return result
    modelled = _model(name, result, args, log)
    if modelled is None:
        if name not in ("__get__", "__repr__", "__format__", "size", "dim", "numel", "__len__", "shape", "dtype"):
            log.concretised += 1
        return result
    return modelled


def _model(name: str, result: object, args: tuple, log: PathLog) -> object | None:
    if name in ("item", "__float__", "__int__", "__bool__", "__index__") and isinstance(args[0], SymTensor):
        sym = args[0].sym
        if sym is None or len(sym) != 1:
            return None
        expr = sym[0]
        if z3.is_bool(expr):
            if name in ("__bool__", "item"):
                log.record(expr, bool(result), None)
            return result
        if name == "__bool__":
            log.record(expr != 0, bool(result), None)
            return result
        if name in ("__int__", "__index__"):
            return None
        return make(result, expr, log)
    if not isinstance(result, torch.Tensor) or result.numel() > MAX_ELEMENTS:
        return None
    count = result.numel()
    if name in _ELEMENTWISE and len(args) >= 2:
        a, b = _elements(args[0], count), _elements(args[1], count)
        if a is None or b is None or any(x is None for x in a + b):
            return None
        op = _ELEMENTWISE[name]
        return SymTensor.wrap(result, [op(_real(x), _real(y)) for x, y in zip(a, b)], log)
    if name in _COMPARE and len(args) >= 2:
        a, b = _elements(args[0], count), _elements(args[1], count)
        if a is None or b is None or any(x is None for x in a + b):
            return None
        op = _COMPARE[name]
        return SymTensor.wrap(result, [op(_real(x), _real(y)) for x, y in zip(a, b)], log)
    source = args[0] if args else None
    if not isinstance(source, SymTensor) or getattr(source, "sym", None) is None:
        return None
    if name in _UNARY and (name not in ("reshape", "view", "flatten", "to", "float") or len(args) <= 3):
        if result.numel() != len(source.sym):
            return None
        return SymTensor.wrap(result, [_UNARY[name](x) for x in source.sym], log)
    if name in ("sum", "mean", "max", "min", "amax", "amin") and len(args) == 1 and count == 1:
        values = [_real(x) for x in source.sym]
        if name == "sum":
            expr = z3.Sum(values)
        elif name == "mean":
            expr = z3.Sum(values) / len(values)
        else:
            expr = values[0]
            for x in values[1:]:
                expr = z3.If(x > expr, x, expr) if name in ("max", "amax") else z3.If(x < expr, x, expr)
        return SymTensor.wrap(result, [expr], log)
    return None
