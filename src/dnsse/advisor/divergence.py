"""Input values that make two ranks take different sides of one branch.

Ranks run one program on their share of the work, so a condition on an input
often involves the rank too (``tokens - rank * block > 0``): for most inputs
every rank decides it the same way, and for a few they do not, and one rank
skips a collective or a send that the others make. The concolic inputs of an
execution (see :mod:`dnsse.symbolic.concolic`) record each comparison with the
agent that made it; where two agents compared at one site, came out the same
way, and compared different expressions, z3 (through the symbolic engine's
:func:`~dnsse.symbolic.solve.solve`) is asked for inputs in their ranges that
make exactly one of the two conditions hold.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import z3

from dnsse.symbolic.solve import Query, solve
from dnsse.symbolic.values import Condition

MAX_QUERIES = 8  # per execution: each costs a solver call


@dataclass(frozen=True)
class Divergence:
    """``values`` (input name -> value) should make ``agents`` decide the condition at ``where`` apart."""

    values: tuple[tuple[str, object], ...]
    agents: tuple[str, str]
    where: str


def diverging_inputs(
    conditions: Sequence[Condition], constraints: Sequence[Any], asked: set[tuple]
) -> list[Divergence]:
    """For each site two agents compared at alike, inputs that split them; ``asked`` keeps the pairs already asked."""
    first: dict[tuple, dict[str, Condition]] = {}
    for condition in conditions:
        if condition.agent is not None:
            first.setdefault(condition.site, {}).setdefault(condition.agent, condition)
    found = []
    queries = 0
    for site, by_agent in first.items():
        agents = list(by_agent)
        for a, b in zip(agents, agents[1:]):
            one, other = by_agent[a], by_agent[b]
            key = (site, a, b)
            if one.taken != other.taken or one.expr.eq(other.expr) or key in asked:
                continue
            if queries >= MAX_QUERIES:
                return found
            queries += 1
            asked.add(key)
            # As a condition not taken, the query asks for its other side: the two conditions apart.
            split = Condition(z3.Xor(one.expr, other.expr), False, site)
            model = solve(Query([], split), constraints)
            if model:
                values = tuple(sorted(model.items()))
                found.append(Divergence(values, (a, b), f"{Path(site[0]).name}:{site[1]}"))
    return found
