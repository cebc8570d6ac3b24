"""The abstract syntax of specifications: LTL over events, future and past.

A formula is a tree of frozen dataclasses with structural equality, so equal
subformulas compare (and hash) equal wherever they were written. ``span`` is
where the node's operator or name stood in the source text; it takes no part
in equality and is there for error messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Span = tuple[int, int]
NO_SPAN: Span = (0, 0)

# Temporal operators by direction; the boolean ones are ! & | -> <->.
FUTURE_UNARY = frozenset({"X", "F", "G"})
FUTURE_BINARY = frozenset({"U", "R", "W"})
PAST = frozenset({"Y", "O", "H", "S"})

# Loosest first, as in Spot: <-> , -> , | , & , binary temporal, unary.
PRECEDENCE = {"<->": 1, "->": 2, "|": 3, "&": 4, "U": 5, "R": 5, "W": 5, "S": 5}
UNARY_PRECEDENCE = 6
RIGHT_ASSOCIATIVE = frozenset({"->", "U", "R", "W", "S"})

FieldValue = int | float | str | bool


@dataclass(frozen=True)
class Formula:
    """Base of every node."""

    def __str__(self) -> str:
        return render(self)


@dataclass(frozen=True)
class Const(Formula):
    value: bool
    span: Span = field(default=NO_SPAN, compare=False, kw_only=True)


@dataclass(frozen=True)
class Atom(Formula):
    """Holds at a position when an event ``name`` with these field values happened there."""

    name: str
    tests: tuple[tuple[str, FieldValue], ...] = ()
    span: Span = field(default=NO_SPAN, compare=False, kw_only=True)


@dataclass(frozen=True)
class Unary(Formula):
    op: str
    operand: Formula
    span: Span = field(default=NO_SPAN, compare=False, kw_only=True)


@dataclass(frozen=True)
class Binary(Formula):
    op: str
    left: Formula
    right: Formula
    span: Span = field(default=NO_SPAN, compare=False, kw_only=True)


def has_future(formula: Formula) -> bool:
    """Whether ``formula`` contains a future-time operator."""
    if isinstance(formula, Unary):
        return formula.op in FUTURE_UNARY or has_future(formula.operand)
    if isinstance(formula, Binary):
        return formula.op in FUTURE_BINARY or has_future(formula.left) or has_future(formula.right)
    return False


def atoms_of(formula: Formula) -> list[Atom]:
    """The distinct atoms of ``formula``, in the order they first appear."""
    found: dict[Atom, None] = {}

    def walk(node: Formula) -> None:
        if isinstance(node, Atom):
            found.setdefault(node)
        elif isinstance(node, Unary):
            walk(node.operand)
        elif isinstance(node, Binary):
            walk(node.left)
            walk(node.right)

    walk(formula)
    return list(found)


def render_value(value: FieldValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value if value.isidentifier() and value not in ("true", "false") else _quote(value)
    return repr(value)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_atom(atom: Atom) -> str:
    if not atom.tests:
        return atom.name
    return f"{atom.name}({', '.join(f'{k}={render_value(v)}' for k, v in atom.tests)})"


def render(formula: Formula) -> str:
    """The formula in the concrete syntax, with only the parentheses it needs."""
    if isinstance(formula, Const):
        return "true" if formula.value else "false"
    if isinstance(formula, Atom):
        return render_atom(formula)
    if isinstance(formula, Unary):
        inner = render(formula.operand)
        if _precedence(formula.operand) < UNARY_PRECEDENCE:
            inner = f"({inner})"
        return f"{formula.op}{inner}" if formula.op == "!" else f"{formula.op} {inner}"
    assert isinstance(formula, Binary)
    level = PRECEDENCE[formula.op]
    right_assoc = formula.op in RIGHT_ASSOCIATIVE
    left, right = render(formula.left), render(formula.right)
    left_level, right_level = _precedence(formula.left), _precedence(formula.right)
    if left_level < level or (left_level == level and right_assoc):
        left = f"({left})"
    if right_level < level or (right_level == level and not right_assoc):
        right = f"({right})"
    return f"{left} {formula.op} {right}"


def _precedence(formula: Formula) -> int:
    if isinstance(formula, Binary):
        return PRECEDENCE[formula.op]
    if isinstance(formula, Unary):
        return UNARY_PRECEDENCE
    return UNARY_PRECEDENCE + 1
