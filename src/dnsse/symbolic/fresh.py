"""Asking z3 in a fresh context, so that an answer depends on the query alone.

z3 keeps what it saw in its context: the same query asked twice in one
process may get two different models. Solving each query in a context of its
own makes the model a function of the query, so a resumed campaign (a new
process, which rebuilds its queries) solves as the uninterrupted one did.
"""

from __future__ import annotations

from typing import Any, Sequence

import z3


def fresh_model(assertions: Sequence[Any], timeout_ms: int) -> Any | None:
    """A model of every assertion, found in a fresh context; ``None`` when unsat or unknown."""
    return fresh_answer(assertions, timeout_ms)[1]


def fresh_answer(assertions: Sequence[Any], timeout_ms: int) -> tuple[Any, Any | None]:
    """z3's answer in a fresh context (``z3.sat``, ``z3.unsat`` or ``z3.unknown``: out of time), and the model if sat."""
    context = z3.Context()
    solver = z3.Solver(ctx=context)
    solver.set("timeout", timeout_ms)
    for assertion in assertions:
        solver.add(assertion.translate(context))
    answer = solver.check()
    return answer, solver.model() if answer == z3.sat else None
