"""The automaton of a formula, built lazily by formula progression.

Future operators are handled by formula progression: after each position the
formula is rewritten into what the rest of the run must satisfy. Residuals
are hash-consed (every distinct node is one int), and simplified as they are
built (``and``/``or`` flattened, sorted, deduplicated, ``x & !x`` is false),
so the residuals of a formula form a small finite set: the states of an
automaton built on demand. A state is (residual, past bits): each past
subformula (``Y O H S``) keeps one bit, its value (or its operand's, for
``Y``) at the previous position. A transition is memoized on (state, atom
mask), so after a short warm-up a position costs one dict lookup.

Verdicts: the residual ``false`` is a bad prefix (no continuation, not even
ending here, satisfies the formula) and ``true`` a good one. At the end of a
finished run the residual is judged under LTLf semantics: the obligation of a
strong next (``X``, ``F``, ``U``) fails when there is no next position, that
of a weak one (``G``, ``R``, ``W``) holds. Progression detects the
*syntactically* decided prefixes (the informative bad prefixes of Kupferman
and Vardi): a residual that is unsatisfiable without being ``false``, such as
``F a & G !a``, is reported when the run ends rather than at once.
"""

from __future__ import annotations

from typing import Iterable, Protocol

from dnsse.spec.syntax import PAST, Atom, Binary, Const, FieldValue, Formula, Unary, atoms_of, render, render_atom

TRUE_ID, FALSE_ID = 0, 1
# State ids 0 and 1 are the decided states, whatever the past bits.
SATISFIED_STATE, VIOLATED_STATE = 0, 1


class EventLike(Protocol):
    name: str
    fields: dict


_MISSING = object()


def field_matches(actual: object, expected: FieldValue) -> bool:
    """``k=v`` in an atom: equality, except that a bool never equals a number."""
    if actual is _MISSING or isinstance(actual, bool) != isinstance(expected, bool):
        return False
    try:
        return bool(actual == expected)
    except Exception:  # noqa: BLE001 - a tensor or array field: not a scalar, so no match
        return False


def tested_bits(tested: tuple[tuple[int, tuple], ...], fields: dict) -> int:
    """The bits of the atoms with field tests that an event with ``fields`` satisfies."""
    mask = 0
    for bit, tests in tested:
        for key, value in tests:
            if not field_matches(fields.get(key, _MISSING), value):
                break
        else:
            mask |= bit
    return mask


class Automaton:
    """The states and transitions of one formula, built as runs need them.

    One automaton serves every run of a campaign: the transitions learnt in
    one execution make the next ones cheaper.
    """

    def __init__(self, formula: Formula) -> None:
        self.formula = formula
        self.atoms = atoms_of(formula)
        self.past = _past_nodes(formula)
        self.atom_bits = len(self.atoms)
        # Event name -> (bits of its atoms without tests, [(bit, tests)]).
        index: dict[str, tuple[int, list[tuple[int, tuple]]]] = {}
        for number, atom in enumerate(self.atoms):
            plain, tested = index.get(atom.name, (0, []))
            if atom.tests:
                tested.append((1 << number, atom.tests))
            else:
                plain |= 1 << number
            index[atom.name] = (plain, tested)
        self.by_name = {name: (plain, tuple(tested)) for name, (plain, tested) in index.items()}
        self._literal = {atom: i for i, atom in enumerate(self.atoms)}
        self._literal.update({node: self.atom_bits + i for i, node in enumerate(self.past)})
        self._nodes: list[tuple] = [("true",), ("false",)]
        self._ids: dict[tuple, int] = {("true",): TRUE_ID, ("false",): FALSE_ID}
        self._progressed: dict[tuple[int, int], int] = {}
        self._at_end: dict[int, bool] = {}
        self._states: list[tuple[int, tuple[bool, ...]]] = [(TRUE_ID, ()), (FALSE_ID, ())]
        self._state_ids: dict[tuple[int, tuple[bool, ...]], int] = {}
        self.transitions: dict[int, int] = {}
        start_past = tuple(node.op == "H" for node in self.past)
        self.initial = self._state(self._build(formula), start_past)
        # Where the monitor rests when nothing relevant happens: reaching it
        # again closes the window of a later violation.
        quiet = self.advance(self.initial, 0)
        self.quiet = quiet if quiet > VIOLATED_STATE else self.initial

    def advance(self, state: int, mask: int) -> int:
        """The state after a position whose atoms are ``mask`` (memoized)."""
        key = (state << self.atom_bits) | mask
        following = self.transitions.get(key)
        if following is None:
            following = self.transitions[key] = self._compute(state, mask)
        return following

    def holds_at_end(self, state: int) -> bool:
        """The LTLf verdict when the run ends in ``state``."""
        return self._end(self._states[state][0])

    # -------------------------------------------------------------- building
    def _state(self, residual: int, past: tuple[bool, ...]) -> int:
        if residual <= FALSE_ID:
            return residual
        key = (residual, past)
        found = self._state_ids.get(key)
        if found is None:
            found = self._state_ids[key] = len(self._states)
            self._states.append(key)
        return found

    def _intern(self, node: tuple) -> int:
        found = self._ids.get(node)
        if found is None:
            found = self._ids[node] = len(self._nodes)
            self._nodes.append(node)
        return found

    def _build(self, formula: Formula) -> int:
        literal = self._literal.get(formula)  # atoms and past subformulas
        if literal is not None:
            return self._intern(("lit", literal))
        if isinstance(formula, Const):
            return TRUE_ID if formula.value else FALSE_ID
        if isinstance(formula, Unary):
            operand = self._build(formula.operand)
            return self._not(operand) if formula.op == "!" else self._intern((formula.op, operand))
        assert isinstance(formula, Binary)
        left, right = self._build(formula.left), self._build(formula.right)
        if formula.op == "&":
            return self._and((left, right))
        if formula.op == "|":
            return self._or((left, right))
        if formula.op == "->":
            return self._or((self._not(left), right))
        if formula.op == "<->":
            return self._iff(left, right)
        return self._intern((formula.op, left, right))

    def _not(self, a: int) -> int:
        if a <= FALSE_ID:
            return 1 - a
        node = self._nodes[a]
        if node[0] == "not":
            return node[1]
        return self._intern(("not", a))

    def _junction(self, kind: str, items: Iterable[int]) -> int:
        unit, zero = (TRUE_ID, FALSE_ID) if kind == "and" else (FALSE_ID, TRUE_ID)
        flat: set[int] = set()
        pending = list(items)
        while pending:
            item = pending.pop()
            if item == zero:
                return zero
            if item == unit:
                continue
            node = self._nodes[item]
            if node[0] == kind:
                pending.extend(node[1])
            else:
                flat.add(item)
        for item in flat:
            node = self._nodes[item]
            if node[0] == "not" and node[1] in flat:
                return zero
        if not flat:
            return unit
        if len(flat) == 1:
            return next(iter(flat))
        return self._intern((kind, tuple(sorted(flat))))

    def _and(self, items: Iterable[int]) -> int:
        return self._junction("and", items)

    def _or(self, items: Iterable[int]) -> int:
        return self._junction("or", items)

    def _iff(self, a: int, b: int) -> int:
        if a == b:
            return TRUE_ID
        if a > b:
            a, b = b, a
        if a == TRUE_ID:
            return b
        if a == FALSE_ID:
            return self._not(b)
        return self._intern(("iff", a, b))

    def _next(self, kind: str, a: int) -> int:
        # A strong next of false is false; a weak next of true is true.
        if (kind == "strong" and a == FALSE_ID) or (kind == "weak" and a == TRUE_ID):
            return a
        return self._intern((kind, a))

    # ------------------------------------------------------------ progressing
    def _compute(self, state: int, mask: int) -> int:
        if state <= VIOLATED_STATE:
            return state
        residual, before = self._states[state]
        now: dict[Formula, bool] = {}
        after: list[bool] = []
        for slot, node in enumerate(self.past):
            if isinstance(node, Unary):
                operand = self._holds_now(node.operand, mask, now)
                value = {"Y": before[slot], "O": operand or before[slot], "H": operand and before[slot]}[node.op]
                after.append(operand if node.op == "Y" else value)
            else:
                value = self._holds_now(node.right, mask, now) or (
                    self._holds_now(node.left, mask, now) and before[slot]
                )
                after.append(value)
            now[node] = value
        letters = mask
        for slot, node in enumerate(self.past):
            if now[node]:
                letters |= 1 << (self.atom_bits + slot)
        return self._state(self._progress(residual, letters), tuple(after))

    def _holds_now(self, formula: Formula, mask: int, now: dict[Formula, bool]) -> bool:
        """A past-only formula at the current position (its past subformulas are in ``now``)."""
        if formula in now:
            return now[formula]
        if isinstance(formula, Atom):
            return bool(mask >> self._literal[formula] & 1)
        if isinstance(formula, Const):
            return formula.value
        if isinstance(formula, Unary):
            assert formula.op == "!"
            return not self._holds_now(formula.operand, mask, now)
        assert isinstance(formula, Binary)
        left = self._holds_now(formula.left, mask, now)
        right = self._holds_now(formula.right, mask, now)
        return {"&": left and right, "|": left or right, "->": not left or right, "<->": left == right}[formula.op]

    def _progress(self, a: int, letters: int) -> int:
        """What the rest of the run must satisfy for ``a`` to hold here, given ``letters``."""
        if a <= FALSE_ID:
            return a
        key = (a, letters)
        found = self._progressed.get(key)
        if found is not None:
            return found
        node = self._nodes[a]
        kind = node[0]
        if kind == "lit":
            result = TRUE_ID if letters >> node[1] & 1 else FALSE_ID
        elif kind == "not":
            result = self._not(self._progress(node[1], letters))
        elif kind in ("and", "or"):
            result = self._junction(kind, [self._progress(item, letters) for item in node[1]])
        elif kind == "iff":
            result = self._iff(self._progress(node[1], letters), self._progress(node[2], letters))
        elif kind in ("strong", "weak"):
            result = self._progress(node[1], letters)
        elif kind == "X":
            result = self._next("strong", node[1])
        elif kind == "F":
            result = self._or((self._progress(node[1], letters), self._next("strong", a)))
        elif kind == "G":
            result = self._and((self._progress(node[1], letters), self._next("weak", a)))
        else:
            left, right = self._progress(node[1], letters), self._progress(node[2], letters)
            if kind == "U":
                result = self._or((right, self._and((left, self._next("strong", a)))))
            elif kind == "W":
                result = self._or((right, self._and((left, self._next("weak", a)))))
            else:  # R
                result = self._and((right, self._or((left, self._next("weak", a)))))
        self._progressed[key] = result
        return result

    def _end(self, a: int) -> bool:
        """``a`` judged on the empty rest of a finished run."""
        found = self._at_end.get(a)
        if found is not None:
            return found
        node = self._nodes[a]
        kind = node[0]
        if kind in ("true", "false"):
            result = kind == "true"
        elif kind == "lit":
            # Only an unprogressed formula (a run without positions) has
            # literals at the top: no event happened; past operators read
            # their start values (H holds, Y O S do not).
            slot = node[1] - self.atom_bits
            result = slot >= 0 and self.past[slot].op == "H"
        elif kind == "not":
            result = not self._end(node[1])
        elif kind == "and":
            result = all(self._end(item) for item in node[1])
        elif kind == "or":
            result = any(self._end(item) for item in node[1])
        elif kind == "iff":
            result = self._end(node[1]) == self._end(node[2])
        else:
            result = kind in ("weak", "G", "R", "W")
        self._at_end[a] = result
        return result

    # -------------------------------------------------------------- reporting
    def unmet_at_end(self, state: int) -> str:
        """The obligations that fail if the run ends in ``state``, as formula text."""
        residual = self._states[state][0]
        node = self._nodes[residual]
        parts = node[1] if node[0] == "and" else (residual,)
        return " & ".join(self._render(part) for part in parts if not self._end(part))

    def _render(self, a: int) -> str:
        node = self._nodes[a]
        kind = node[0]
        if kind in ("true", "false"):
            return kind
        if kind == "lit":
            number = node[1]
            return render_atom(self.atoms[number]) if number < self.atom_bits else render(
                self.past[number - self.atom_bits]
            )
        if kind in ("strong", "weak"):
            return self._render(node[1])
        if kind == "not":
            return f"!{self._operand(node[1])}"
        if kind in ("and", "or"):
            joint = " & " if kind == "and" else " | "
            return joint.join(self._operand(item) for item in node[1])
        if kind == "iff":
            return f"{self._operand(node[1])} <-> {self._operand(node[2])}"
        if len(node) == 2:
            return f"{kind} {self._operand(node[1])}"
        return f"{self._operand(node[1])} {kind} {self._operand(node[2])}"

    def _operand(self, a: int) -> str:
        """``a`` rendered as an operand: in parentheses unless it is a single literal."""
        text = self._render(a)
        node = self._nodes[a]
        while node[0] in ("strong", "weak"):
            node = self._nodes[node[1]]
        simple = node[0] in ("true", "false") or (node[0] == "lit" and node[1] < self.atom_bits)
        return text if simple else f"({text})"


def _past_nodes(formula: Formula) -> list[Unary | Binary]:
    """The distinct past-operator subformulas, operands before the nodes that use them."""
    found: dict[Formula, None] = {}

    def walk(node: Formula) -> None:
        if isinstance(node, Unary):
            walk(node.operand)
        elif isinstance(node, Binary):
            walk(node.left)
            walk(node.right)
        else:
            return
        if node.op in PAST:  # type: ignore[union-attr]
            found.setdefault(node)

    walk(formula)
    return list(found)  # type: ignore[arg-type]
