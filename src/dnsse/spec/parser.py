"""Parse LTL specifications (DESIGN §4) with lark.

Precedence, loosest first, as in Spot: ``<->``, ``->`` (right associative),
``|``, ``&``, the binary temporal operators ``U R W S`` (right associative),
then the unary ``! X F G Y O H``. Past operators apply to past-only formulas
(no ``X F G U R W`` inside ``Y O H S``): that keeps each past subformula one
bit of monitor state.

A syntax error is a :class:`SpecSyntaxError` (a ``BadInput``: exit 2) whose
message shows the formula with a caret under the bad token.
"""

from __future__ import annotations

import functools

from typing import TYPE_CHECKING

from dnsse.errors import BadInput
from dnsse.spec.syntax import PAST, Atom, Binary, Const, FieldValue, Formula, Span, Unary, has_future

if TYPE_CHECKING:
    from lark import Lark, Token, Tree, UnexpectedInput

GRAMMAR = r"""
?start: iff
?iff: imp | iff IFF imp -> binary
?imp: or_ | or_ IMP imp -> binary
?or_: and_ | or_ (OR | OR2) and_ -> binary
?and_: temporal | and_ (AND | AND2) temporal -> binary
?temporal: unary | unary (UNTIL | RELEASE | WEAK_UNTIL | SINCE) temporal -> binary
?unary: primary | (NOT | NEXT | EVENTUALLY | ALWAYS | YESTERDAY | ONCE | HISTORICALLY) unary -> unary
?primary: TRUE -> const
        | FALSE -> const
        | atom
        | "(" iff ")"
atom: NAME ["(" [test ("," test)*] ")"]
test: NAME "=" value
?value: NAME | NUMBER | STRING | TRUE | FALSE

IFF: "<->"
IMP: "->"
OR: "|"
OR2: "||"
AND: "&"
AND2: "&&"
UNTIL: "U"
RELEASE: "R"
WEAK_UNTIL: "W"
SINCE: "S"
NOT: "!"
NEXT: "X"
EVENTUALLY: "F"
ALWAYS: "G"
YESTERDAY: "Y"
ONCE: "O"
HISTORICALLY: "H"
TRUE: "true"
FALSE: "false"
NAME: /[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*/
NUMBER: /-?\d+(\.\d+)?/
STRING: /"(\\.|[^"\\])*"|'(\\.|[^'\\])*'/
%ignore /\s+/
"""

_READABLE = {
    "NAME": "a name",
    "NUMBER": "a number",
    "STRING": "a quoted string",
    "NOT": "a unary operator (! X F G Y O H)",
    "NEXT": "a unary operator (! X F G Y O H)",
    "EVENTUALLY": "a unary operator (! X F G Y O H)",
    "ALWAYS": "a unary operator (! X F G Y O H)",
    "YESTERDAY": "a unary operator (! X F G Y O H)",
    "ONCE": "a unary operator (! X F G Y O H)",
    "HISTORICALLY": "a unary operator (! X F G Y O H)",
    "UNTIL": "a binary operator (& | -> <-> U R W S)",
    "RELEASE": "a binary operator (& | -> <-> U R W S)",
    "WEAK_UNTIL": "a binary operator (& | -> <-> U R W S)",
    "SINCE": "a binary operator (& | -> <-> U R W S)",
    "AND": "a binary operator (& | -> <-> U R W S)",
    "AND2": "a binary operator (& | -> <-> U R W S)",
    "OR": "a binary operator (& | -> <-> U R W S)",
    "OR2": "a binary operator (& | -> <-> U R W S)",
    "IMP": "a binary operator (& | -> <-> U R W S)",
    "IFF": "a binary operator (& | -> <-> U R W S)",
    "TRUE": "true",
    "FALSE": "false",
    "LPAR": "'('",
    "RPAR": "')'",
    "COMMA": "','",
    "EQUAL": "'='",
    "$END": "the end of the formula",
}


class SpecSyntaxError(BadInput):
    """A formula that does not parse; the message points at the bad token."""

    def __init__(self, text: str, position: int, problem: str) -> None:
        self.text = text
        self.position = position
        self.problem = problem
        super().__init__(f"the spec does not parse: {problem}\n{caret_lines(text, position)}\n{SYNTAX_HINT}")


SYNTAX_HINT = (
    "Write LTL over event names, e.g. 'G !(lock.acquire(thread=a) & lock.acquire(thread=b))' "
    "or 'G (req -> F ack)'; see docs/events.md for the operators and the events."
)


def caret_lines(text: str, position: int) -> str:
    """``text`` (its line holding ``position``) and a caret under ``position``."""
    line_start = text.rfind("\n", 0, position) + 1
    line_end = text.find("\n", position)
    line = text[line_start : line_end if line_end != -1 else len(text)]
    return f"  {line}\n  {' ' * (position - line_start)}^"


@functools.cache
def _lark() -> Lark:
    # Imported here: campaigns without specifications do not pay for lark.
    from lark import Lark

    return Lark(GRAMMAR, parser="lalr", maybe_placeholders=False)


def parse(text: str) -> Formula:
    """The formula written in ``text``; :class:`SpecSyntaxError` when it is not one."""
    from lark import UnexpectedInput

    if not text.strip():
        raise SpecSyntaxError(text, 0, "the formula is empty")
    try:
        tree = _lark().parse(text)
    except UnexpectedInput as error:
        raise _syntax_error(text, error) from None
    formula = _build(tree)
    _check_past_operands(text, formula)
    return formula


def _syntax_error(text: str, error: UnexpectedInput) -> SpecSyntaxError:
    from lark import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

    if isinstance(error, UnexpectedEOF):
        return SpecSyntaxError(text, len(text), f"the formula ends too early; expected {_expected(error.expected)}")
    if isinstance(error, UnexpectedCharacters):
        return SpecSyntaxError(text, error.pos_in_stream, f"unexpected character {text[error.pos_in_stream]!r}")
    assert isinstance(error, UnexpectedToken)
    token = error.token
    if token.type == "$END":
        return SpecSyntaxError(
            text, len(text.rstrip()), f"the formula ends too early; expected {_expected(error.expected)}"
        )
    return SpecSyntaxError(
        text, token.start_pos or 0, f"unexpected {str(token)!r}; expected {_expected(error.expected)}"
    )


def _expected(names: set[str]) -> str:
    readable = set()
    for name in names:
        if name in _READABLE:
            readable.add(_READABLE[name])
            continue
        try:
            readable.add(repr(_lark().get_terminal(name).pattern.value))
        except KeyError:
            readable.add(name)
    return " or ".join(sorted(readable))


def _span(token: Token) -> Span:
    return (token.start_pos or 0, token.end_pos or 0)


_CANONICAL = {"||": "|", "&&": "&"}


def _build(tree: Tree | Token) -> Formula:
    """The parse tree as :mod:`dnsse.spec.syntax` nodes."""
    kind, children = tree.data, tree.children  # type: ignore[union-attr]
    if kind == "binary":
        left, op, right = children
        return Binary(_CANONICAL.get(str(op), str(op)), _build(left), _build(right), span=_span(op))
    if kind == "unary":
        op, operand = children
        return Unary(str(op), _build(operand), span=_span(op))
    if kind == "const":
        (token,) = children
        return Const(token == "true", span=_span(token))
    assert kind == "atom", kind
    name, *tests = children
    return Atom(str(name), tuple((str(t.children[0]), _value(t.children[1])) for t in tests), span=_span(name))


def _value(token: Token) -> FieldValue:
    text = str(token)
    if token.type == "NUMBER":
        return float(text) if "." in text else int(text)
    if token.type == "STRING":
        return bytes(text[1:-1], "utf-8").decode("unicode_escape")
    if token.type in ("TRUE", "FALSE"):
        return token.type == "TRUE"
    return text


def _check_past_operands(text: str, formula: Formula) -> None:
    if isinstance(formula, Unary):
        if formula.op in PAST and has_future(formula.operand):
            _past_over_future(text, formula)
        _check_past_operands(text, formula.operand)
    elif isinstance(formula, Binary):
        if formula.op in PAST and (has_future(formula.left) or has_future(formula.right)):
            _past_over_future(text, formula)
        _check_past_operands(text, formula.left)
        _check_past_operands(text, formula.right)


def _past_over_future(text: str, formula: Unary | Binary) -> None:
    raise SpecSyntaxError(
        text,
        formula.span[0],
        f"the past operator {formula.op} applies to a formula with future operators (X F G U R W); "
        "past operators take past-only operands, so move the future part outside",
    )
