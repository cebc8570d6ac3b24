"""Where specifications come from: ``--spec``, spec files, and the target itself.

A target states its own properties with a module-level list of string
literals, read from the source without running it::

    DNSSE_SPECS = ["G !(lock.acquire(thread=a) & lock.acquire(thread=b))"]

A spec file holds one formula per line; blank lines and lines starting with
``#`` are skipped.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterable

from dnsse.errors import BadInput
from dnsse.spec.builtins import PREFIX, parse_builtin
from dnsse.spec.parser import parse
from dnsse.spec.properties import LtlProperty, Property
from dnsse.spec.watch import SpecSuite
from dnsse.spec.syntax import Binary, Formula, Unary
from dnsse.validation import MAX_SPEC_DEPTH, check_spec_text

TARGET_SPECS = "DNSSE_SPECS"


def parse_property(text: str) -> Property:
    """An LTL formula, or ``builtin:NAME(...)``; SpecSyntaxError/BadInput when it is neither."""
    try:
        if text.strip().startswith(PREFIX):
            return parse_builtin(text)
        formula = parse(text)
        check_spec_depth(formula, text)
        return LtlProperty(text.strip(), formula)
    except RecursionError:
        raise BadInput(
            f"the specification {text[:40]!r}... is nested too deeply for dnsse to read; "
            "write it with fewer nested parentheses or operators"
        ) from None


def check_spec_depth(formula: Formula, text: str) -> None:
    """Refuse formulas nested deeper than the monitor's recursive construction handles."""
    deepest, pending = 0, [(formula, 1)]
    while pending:
        node, depth = pending.pop()
        deepest = max(deepest, depth)
        if isinstance(node, Unary):
            pending.append((node.operand, depth + 1))
        elif isinstance(node, Binary):
            pending.extend(((node.left, depth + 1), (node.right, depth + 1)))
    if deepest > MAX_SPEC_DEPTH:
        raise BadInput(
            f"the specification {text[:40]!r}... nests {deepest} operators deep, more than dnsse reads "
            f"({MAX_SPEC_DEPTH} at most); split it into several --spec properties"
        )


def read_spec_file(path: Path) -> list[tuple[str, str]]:
    """(where, formula) for every formula line of the spec file ``path``."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise BadInput(f"cannot read the spec file {path}: {error}") from None
    return [
        (f"{path}:{number}", line.strip())
        for number, line in enumerate(lines, start=1)
        if line.strip() and not line.strip().startswith("#")
    ]


def specs_in_target(path: Path) -> list[str]:
    """The strings of a top-level ``DNSSE_SPECS = [...]`` in the target's source."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError):
        return []  # loading the target reports these with a better message
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == TARGET_SPECS for t in targets) and node.value is not None:
                try:
                    value = ast.literal_eval(node.value)
                except ValueError:
                    value = None
                if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                    raise BadInput(
                        f"{path}: {TARGET_SPECS} must be a list of string literals (LTL formulas), "
                        f"e.g. {TARGET_SPECS} = [\"G !bad\"]"
                    )
                return list(value)
    return []


def load_suite(
    specs: Iterable[str], spec_files: Iterable[Path] = (), target: Path | None = None
) -> SpecSuite | None:
    """Every property from ``--spec``, the spec files and the target; ``None`` when there is none."""
    sources: list[tuple[str, str]] = [("--spec", text) for text in specs]
    for path in spec_files:
        sources.extend(read_spec_file(path))
    if target is not None:
        sources.extend((f"{TARGET_SPECS} in {target}", text) for text in specs_in_target(target))
    properties: list[Property] = []
    seen: set[str] = set()
    for where, text in sources:
        try:
            check_spec_text(text, where)
            prop = parse_property(text)
        except BadInput as error:
            if where == "--spec":
                raise
            raise BadInput(f"{where}: {error}") from None
        if prop.text not in seen:
            seen.add(prop.text)
            properties.append(prop)
    return SpecSuite(properties) if properties else None
