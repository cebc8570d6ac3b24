"""What the runs and the source say about the calls of actors that may crash.

The controlled Ray names every actor call's agent ``Class#N.method#K`` and
asks a ``fault`` choice at the points where that call's worker may die, only
for actors that declare ``max_restarts``. So the runs show which actors may
crash and, in order, each call they ran; a call that submitted work or put an
object (saved to a checkpoint actor, wrote to the object store) persisted
something. The source shows which methods change the actor's state: those
that assign to, or call a mutating method of, an attribute of ``self``.

A call of a state-changing method that persisted nothing leaves a change that
a restart (which re-runs the constructor) loses: the offline advisor proposes
crashing the actor right after it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from dnsse.advisor.step import Step

_CALL = re.compile(r"^(?P<actor>.+#\d+)\.(?P<method>[A-Za-z_]\w*)#\d+$")
# Steps of a call that hand something to the outside of the actor's process.
PERSISTING_KINDS = frozenset({"actor.submit", "ray.submit", "ray.put"})
# Methods of a container attribute that change it in place.
_MUTATING = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "update", "add", "discard", "setdefault",
     "popitem", "appendleft", "extendleft", "popleft", "add_", "mul_", "sub_", "copy_", "zero_"}
)


@dataclass(frozen=True, slots=True)
class ActorCall:
    """The ``nth`` call of ``method`` that ``actor`` ran in one execution, and whether it persisted anything."""

    actor: str
    method: str
    nth: int
    persisted: bool


def call_of(agent: str) -> tuple[str, str] | None:
    """``(actor, method)`` of an actor call's agent name, ``None`` for any other agent."""
    match = _CALL.match(agent)
    return (match["actor"], match["method"]) if match else None


def calls_in(steps: Sequence[Step]) -> list[ActorCall]:
    """The actor calls of one execution, in the order they first stepped."""
    order: list[str] = []
    persisted: dict[str, bool] = {}
    for step in steps:
        if call_of(step.agent) is None:
            continue
        if step.agent not in persisted:
            order.append(step.agent)
            persisted[step.agent] = False
        persisted[step.agent] |= step.kind in PERSISTING_KINDS
    calls = []
    counts: dict[tuple[str, str], int] = {}
    for agent in order:
        actor, method = call_of(agent)  # type: ignore[misc]
        nth = counts[(actor, method)] = counts.get((actor, method), 0) + 1
        calls.append(ActorCall(actor, method, nth, persisted[agent]))
    return calls


def state_changing_methods(path: Path) -> dict[str, set[str]]:
    """Class name -> the methods of that class (in ``path``) that change an attribute of ``self``."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return {}
    found: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for method in node.body:
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.name != "__init__":
                if method.args.args and any(_changes_self(inner, method.args.args[0].arg) for inner in ast.walk(method)):
                    found.setdefault(node.name, set()).add(method.name)
    return found


def class_of(actor: str) -> str:
    """The class name of an actor label ``Class#N``."""
    return actor.rsplit("#", 1)[0]


def _changes_self(node: ast.AST, self_name: str) -> bool:
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return any(_on_self(target, self_name) for target in targets)
    if isinstance(node, ast.Delete):
        return any(_on_self(target, self_name) for target in node.targets)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MUTATING:
        return _on_self(node.func.value, self_name)
    return False


def _on_self(target: ast.AST, self_name: str) -> bool:
    """``target`` is ``self.x``, ``self.x[i]``, ``self.x.y``... (a tuple of targets: any of them)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_on_self(element, self_name) for element in target.elts)
    while isinstance(target, (ast.Attribute, ast.Subscript)):
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == self_name:
            return True
        target = target.value
    return False
