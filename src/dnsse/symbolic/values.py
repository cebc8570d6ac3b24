"""Concolic numbers: an input's concrete value plus the z3 expression it came from.

:class:`SymInt` and :class:`SymFloat` subclass ``int`` and ``float``, so the
program computes with them exactly as with plain numbers. Arithmetic
(``+ - * / // % **`` by an int, unary minus, ``abs``) keeps an expression;
comparisons return a plain ``bool`` and record the condition with its
outcome and the line of the program that compared, in the execution's
:class:`PathLog`. ``min``/``max`` compare, so they record and return one of
their (concolic) arguments. A value that leaves this world (``int(x)``, an
index, a C call) is *concretised*: the log counts it, and conditions on what
is computed from it are no longer seen.

Comparisons returning plain bools (rather than a symbolic boolean consumed
by ``if``) keep every program working: a comparison result stored, put in a
tensor or serialized is an ordinary ``bool``. The price is that a comparison
whose result never decides a branch is recorded too; negating it still
yields a different run.
"""

from __future__ import annotations

import math
import operator
import sys
from dataclasses import dataclass, field
from typing import Any

import z3

from dnsse.engine.execution import current_agent

# Frames of these files are dnsse's or torch's; a condition's site is the first other frame.
_OWN = __file__.rsplit("/", 1)[0]


def _foreign(filename: str) -> bool:
    return filename.startswith(_OWN) or "/torch/" in filename


@dataclass
class Condition:
    """One comparison an execution made on a concolic value, and how it came out."""

    expr: Any  # a z3 BoolRef
    taken: bool
    # File, line and bytecode offset: one line may compare several times.
    site: tuple[str, int, int]
    # The agent (rank, thread) that compared: two ranks comparing at one site may come out apart.
    agent: str | None = None


@dataclass
class PathLog:
    """What the concolic values of one execution saw."""

    conditions: list[Condition] = field(default_factory=list)
    # Concrete operands compared with concolic values (the CmpLog dictionary).
    operands: set[float] = field(default_factory=set)
    # Constants of the code objects that compared (the source dictionary).
    constants: set[float] = field(default_factory=set)
    concretised: int = 0
    # Expressions computed in a narrower float dtype than Python's (a float16
    # tensor's product), by z3 AST id: the expression (kept alive, so that
    # its id is not reused) and the dtype's name.
    rounding: dict[int, tuple[Any, str]] = field(default_factory=dict)
    _codes: set = field(default_factory=set)

    def record(self, expr: Any, taken: bool, other: object) -> None:
        frame = sys._getframe(2)
        while frame is not None and _foreign(frame.f_code.co_filename):
            frame = frame.f_back
        site = (frame.f_code.co_filename, frame.f_lineno, frame.f_lasti) if frame is not None else ("?", 0, 0)
        if expr is not None:
            simplified = z3.simplify(expr)
            # Decided in real arithmetic is not decided in floating point (x + 1e16 == x).
            if not (z3.is_true(simplified) or z3.is_false(simplified)) or _has_real(expr):
                agent = current_agent()
                self.conditions.append(Condition(expr, taken, site, agent.name if agent is not None else None))
        if isinstance(other, (int, float)) and not isinstance(other, bool) and math.isfinite(other):
            self.operands.add(float(other))
        if frame is not None and frame.f_code not in self._codes:
            self._codes.add(frame.f_code)
            self.constants.update(
                float(c) for c in frame.f_code.co_consts
                if isinstance(c, (int, float)) and not isinstance(c, bool) and math.isfinite(c)
            )


def _has_real(expr: Any) -> bool:
    stack = [expr]
    while stack:
        node = stack.pop()
        if z3.is_real(node):
            return True
        stack.extend(node.children())
    return False


def expression_of(value: object) -> Any:
    """The z3 expression of a concolic value, or a z3 literal for a plain number (None otherwise)."""
    if isinstance(value, (SymInt, SymFloat)):
        return value.expr
    if isinstance(value, bool):
        return z3.IntVal(int(value))
    if isinstance(value, int):
        return z3.IntVal(value)
    if isinstance(value, float) and math.isfinite(value):
        return z3.RealVal(value)
    return None


def log_of(*values: object) -> PathLog | None:
    for value in values:
        log = getattr(value, "log", None)
        if isinstance(log, PathLog):
            return log
    return None


def _real(expr: Any) -> Any:
    return z3.ToReal(expr) if expr is not None and z3.is_int(expr) else expr


def _both(a: Any, b: Any, real: bool) -> tuple[Any, Any] | None:
    if a is None or b is None:
        return None
    if real or z3.is_real(a) or z3.is_real(b):
        return _real(a), _real(b)
    return a, b


def make(value: object, expr: Any, log: PathLog | None) -> object:
    """``value`` as a concolic number when it is one and ``expr`` is known; else plain."""
    if log is None or expr is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return SymInt(value, expr, log)
    if isinstance(value, float) and math.isfinite(value):
        return SymFloat(value, _real(expr), log)
    return value


def _floordiv(a: Any, b: Any) -> Any:
    # Python floors; SMT-LIB's div is Euclidean, which agrees for a positive divisor.
    return z3.If(b > 0, a / b, (-a) / (-b))


def _binary(name: str, reflected: bool):  # type: ignore[no-untyped-def]
    def operate(self, other):  # type: ignore[no-untyped-def]
        if not isinstance(other, (int, float)):
            return NotImplemented
        left, right = (other, self) if reflected else (self, other)
        concrete = getattr(operator, name)(_plain(left), _plain(right))
        pair = _both(expression_of(left), expression_of(right), real=name == "truediv" or isinstance(concrete, float))
        expr = None
        if pair is not None:
            a, b = pair
            if name == "add":
                expr = a + b
            elif name == "sub":
                expr = a - b
            elif name == "mul":
                expr = a * b
            elif name == "truediv":
                expr = a / b
            elif name == "floordiv" and z3.is_int(a):
                expr = _floordiv(a, b)
            elif name == "mod" and z3.is_int(a):
                expr = a - b * _floordiv(a, b)
            elif name == "pow" and isinstance(_plain(right), int) and 0 <= _plain(right) <= 4:
                expr = a ** int(_plain(right))  # type: ignore[operator]
        if expr is None:
            self.log.concretised += 1
        return make(concrete, expr, self.log)

    return operate


def _compare(name: str):  # type: ignore[no-untyped-def]
    def compare(self, other):  # type: ignore[no-untyped-def]
        if not isinstance(other, (int, float)):
            return NotImplemented
        taken = getattr(operator, name)(self._plain(), _plain(other))
        pair = _both(self.expr, expression_of(other), real=False)
        expr = None
        if pair is not None:
            a, b = pair
            expr = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[name]
        self.log.record(expr, bool(taken), other)
        return taken

    return compare


def _plain(value: object) -> object:
    if isinstance(value, SymInt):
        return int.__int__(value)
    if isinstance(value, SymFloat):
        return float.__float__(value)
    return value


class _Concolic:
    _base: type
    expr: Any
    log: PathLog

    def _plain(self) -> Any:
        return _plain(self)

    __add__, __radd__ = _binary("add", False), _binary("add", True)
    __sub__, __rsub__ = _binary("sub", False), _binary("sub", True)
    __mul__, __rmul__ = _binary("mul", False), _binary("mul", True)
    __truediv__, __rtruediv__ = _binary("truediv", False), _binary("truediv", True)
    __floordiv__, __rfloordiv__ = _binary("floordiv", False), _binary("floordiv", True)
    __mod__, __rmod__ = _binary("mod", False), _binary("mod", True)
    __pow__ = _binary("pow", False)
    __eq__, __ne__ = _compare("eq"), _compare("ne")
    __lt__, __le__, __gt__, __ge__ = _compare("lt"), _compare("le"), _compare("gt"), _compare("ge")

    def __neg__(self) -> object:
        return make(-self._plain(), -self.expr, self.log)

    def __pos__(self) -> object:
        return self

    def __abs__(self) -> object:
        return make(abs(self._plain()), z3.If(self.expr < 0, -self.expr, self.expr), self.log)

    def __bool__(self) -> bool:
        taken = bool(self._plain())
        self.log.record(self.expr != 0, taken, 0)
        return taken

    def __hash__(self) -> int:
        return hash(self._plain())

    def __index__(self) -> int:
        self.log.concretised += 1
        return int(self._plain())

    def __int__(self) -> int:
        self.log.concretised += 1
        return int(self._plain())

    def __float__(self) -> float:
        self.log.concretised += 1
        return float(self._plain())

    def __repr__(self) -> str:
        return repr(self._plain())

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return format(self._plain(), spec)

    def __reduce__(self) -> tuple:
        return (self._base, (self._plain(),))

    def __copy__(self) -> object:
        return self

    def __deepcopy__(self, memo: dict) -> object:
        return self

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        # tensors.py builds on these values and needs torch: loaded only when torch calls back here.
        from dnsse.symbolic.tensors import torch_function

        return torch_function(func, args, kwargs or {})


class SymInt(_Concolic, int):
    _base = int

    def __new__(cls, value: int, expr: Any, log: PathLog) -> SymInt:
        self = int.__new__(cls, value)
        self.expr, self.log = expr, log
        return self


class SymFloat(_Concolic, float):
    _base = float

    def __new__(cls, value: float, expr: Any, log: PathLog) -> SymFloat:
        self = float.__new__(cls, value)
        self.expr, self.log = expr, log
        return self
