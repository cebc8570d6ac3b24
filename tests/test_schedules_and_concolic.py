"""The schedule solver and concolic numbers, checked against brute force and z3's own evaluation."""

from __future__ import annotations

import itertools
import random

import pytest
import z3

from dnsse.coverage.feedback import races
from dnsse.engine.operation import Access, Operation
from dnsse.search.schedules import Constraint, Schedule, StepRef, Unsatisfiable, locate, schedule_for
from dnsse.symbolic.values import PathLog, SymFloat, SymInt

W = Access.WRITE
R = Access.READ


def op(kind: str, name: str, access: Access) -> Operation:
    return Operation(kind, ((name, access),))


# Agent 0 saves then ends; agent 1 checks, then loads.
HISTORY = [
    (0, op("save", "ckpt", W)),
    (1, op("check", "flag", R)),
    (0, op("save_end", "flag", W)),
    (1, op("load", "ckpt", R)),
]


def test_races_pair_dependent_steps_of_different_agents() -> None:
    assert {(r.first, r.second) for r in races(HISTORY)} == {(0, 3), (1, 2)}


def test_a_race_reversed_by_a_constraint_keeps_every_other_observed_order() -> None:
    solution = schedule_for(HISTORY, [0, 0], [Constraint(2, 1)])
    assert isinstance(solution, Schedule)
    assert solution.agents == [0, 0, 1, 1]


def test_constraints_against_program_order_are_proved_impossible() -> None:
    load = locate(HISTORY, StepRef(1, "load"))
    save_end = locate(HISTORY, StepRef(0, "save_end"))
    check = locate(HISTORY, StepRef(1, "check"))
    # "load before save_end" and "save_end before check" contradict check-before-load (program order).
    solution = schedule_for(HISTORY, [0, 0], [Constraint(load, save_end), Constraint(save_end, check)])
    assert isinstance(solution, Unsatisfiable)
    assert set(solution.cycle) == {check, load, save_end}
    assert "no schedule exists" in solution.explain(HISTORY)


def test_every_solved_schedule_is_a_linear_extension_checked_by_brute_force() -> None:
    rng = random.Random(3)
    for _ in range(30):
        history = [(rng.randrange(3), op("x", rng.choice("ab"), rng.choice((R, W)))) for _ in range(6)]
        pairs = [(i, j) for i in range(6) for j in range(6) if i != j]
        constraints = [Constraint(*rng.choice(pairs))]
        solution = schedule_for(history, [0, 0, 0], constraints)
        # Brute force: some order of the steps keeps each agent's order, the unconstrained races, and the constraint.
        must = {(r.first, r.second) for r in races(history)} - {(c.after, c.before) for c in constraints}
        must |= {(c.before, c.after) for c in constraints}
        must |= {(i, j) for i in range(6) for j in range(i + 1, 6) if history[i][0] == history[j][0]}
        feasible = any(
            all(perm.index(i) < perm.index(j) for i, j in must) for perm in itertools.permutations(range(6))
        )
        assert isinstance(solution, Schedule) == feasible


@pytest.mark.parametrize("a, b", [(17, 5), (-17, 5), (17, -5), (-17, -5), (0, 3), (9, 9)])
def test_concolic_integer_arithmetic_matches_python_and_its_expression(a: int, b: int) -> None:
    log = PathLog()
    x, y = SymInt(a, z3.Int("x"), log), SymInt(b, z3.Int("y"), log)
    for value, expected in ((x // y, a // b), (x % y, a % b), (x * 3 - y, a * 3 - b), (abs(x), abs(a)), (max(x, y), max(a, b))):
        assert value == expected and isinstance(value, SymInt)
        assert z3.simplify(z3.substitute(value.expr, (z3.Int("x"), z3.IntVal(a)), (z3.Int("y"), z3.IntVal(b)))).as_long() == expected


def test_comparisons_return_plain_bools_and_record_their_condition() -> None:
    log = PathLog()
    s = SymFloat(2.5, z3.Real("s"), log)
    assert (s * 4 > 9.0) is True
    (condition,) = log.conditions
    assert condition.taken is True and condition.site[1] > 0
    assert 9.0 in log.operands
    int(s)
    assert log.concretised == 1
