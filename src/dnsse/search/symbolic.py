"""``symbolic``: concolic execution of the inputs, with z3 solving for branches not yet taken.

Each execution hands the program concolic inputs
(:mod:`dnsse.symbolic.concolic`) and records every condition they meet. For
each condition whose other side no execution has taken yet, a query asks
z3 for inputs that meet the path before it and take that other side; the
model becomes input choices in the run's own choice sequence, whose
schedule is kept, and the next executions run those plans. A plan
*confirms* when its run really takes the branch it was solved for; an
unconfirmed model (real arithmetic where the program computed in floating
point, a path that changed under a different schedule) is counted, and its
query is asked again in IEEE floating point (:mod:`dnsse.symbolic.floating`),
as is a query with no real solution over real-valued inputs: rounding makes
``x + 1e16 == x`` true and a float16 overflow start at 65520. When no
plan is waiting, an entry of the corpus, or the defaults at the start, is
run again concolically to find new conditions.
"""

from __future__ import annotations

import json
import random
import zlib
from collections import deque
from dataclasses import dataclass

import z3

from dnsse.engine.choices import Choice, ChoiceKind, Chooser
from dnsse.engine.inputs import InputSlot
from dnsse.search.corpus import Corpus, EngineStats, admit
from dnsse.search.planned import PlannedChooser
from dnsse.search.mutations import input_positions
from dnsse.search.random_walk import RandomChooser
from dnsse.search.saved_learning import (
    Rerun,
    choices_from,
    choices_json,
    corpus_state,
    restore_corpus,
    restore_stats,
    stats_state,
)
from dnsse.search.strategy import Division, SharedLearning, Strategy, execution_seed
from dnsse.symbolic.concolic import Concolic, bounds, variable_name
from dnsse.symbolic.floating import Undecided, Unsupported, solve_fp
from dnsse.symbolic.solve import Query, solve
from dnsse.symbolic.values import Condition

# Queries one execution may trigger, and tries per branch side before giving up on it.
QUERIES_PER_EXECUTION = 8
TRIES_PER_BRANCH = 3
# A floating-point query is answered in about 50 ms here or not within seconds (a float16 overflow
# through a loss scale, on ddp_bucketed): after this many in a row that z3 left undecided within
# FP_QUERY_TIMEOUT_MS, the campaign asks no more, so that its time goes to executions.
FP_QUERY_TIMEOUT_MS = 1000
FP_UNDECIDED_BEFORE_GIVING_UP = 2

Side = tuple[tuple[str, int, int], bool]


@dataclass
class Ask:
    """One query and what turns its model into a plan: the run it came from and its input positions."""

    query: Query
    constraints: list
    rounding: dict
    base: list[Choice]
    by_name: dict[str, tuple[int, InputSlot]]
    other: Side


@dataclass
class Plan:
    choices: list[Choice]
    expect: Side
    # The query it was solved from, to ask again in floating point if it does not confirm (None once it was).
    ask: Ask | None = None


class DefaultInputs:
    """Inputs at their defaults, everything else at random: the first concolic run."""

    def __init__(self, seed: int) -> None:
        self.random = RandomChooser(seed)

    def next_agent(self, runnable, current, step):  # type: ignore[no-untyped-def]
        return self.random.next_agent(runnable, current, step)

    def next_value(self, kind: str, options: int) -> int:
        return 0 if kind == ChoiceKind.INPUT else self.random.next_value(kind, options)


class SymbolicStrategy(Strategy):
    name = "symbolic"
    division = Division.ROUNDS
    wants_feedback = True

    def __init__(self, seed: int, corpus: Corpus | None = None, admits: bool = True) -> None:
        self.seed = seed
        self._execution = 0
        self.corpus = corpus if corpus is not None else Corpus()
        self.admits = admits
        self.stats = EngineStats(extra={"queries": 0, "solved": 0, "confirmed": 0, "unconfirmed": 0, "concretised": 0,
                                        "fp_queries": 0, "fp_solved": 0, "fp_unsupported": 0})
        self.plans: deque[Plan] = deque()
        self.taken: set[Side] = set()
        self.tries: dict[Side, int] = {}
        self.fp_undecided_in_a_row = 0
        self._current: Plan | None = None
        self._concolic: Concolic | None = None
        self._slots: list[InputSlot] = []
        # (this worker, workers) with parallel workers: each asks its share of the queries of the
        # default inputs' run, which every worker makes alike.
        self.share: tuple[int, int] | None = None
        self._defaults = False

    def shared_learning(self) -> SharedLearning:
        return SharedLearning(self.corpus, self)

    def share_among(self, worker: int, workers: int) -> None:
        self.corpus.share = self.share = (worker, workers)

    @property
    def has_plans(self) -> bool:
        return bool(self.plans)

    def chooser_for(self, execution: int) -> Chooser:
        self._execution = execution + 1
        rng = random.Random(execution_seed(self.seed, execution))
        self._concolic = Concolic()
        fallback = RandomChooser(rng.randrange(2**63))
        self._current = self.plans.popleft() if self.plans else None
        self._defaults = False
        if self._current is not None:
            plan = self._current.choices
        elif self.corpus.has_share() and self.stats.executions > 0:
            plan = self.corpus.pick(rng).choices
        else:
            self._defaults = True
            return PlannedChooser([], DefaultInputs(rng.randrange(2**63)), stand_in=self._concolic.input_value)
        return PlannedChooser(plan, fallback, stand_in=self._concolic.input_value)

    def observe(self, result) -> None:  # type: ignore[no-untyped-def]
        self._slots = result.slots
        self.stats.count(result, self._execution)
        if self.admits:
            admit(self.corpus, result, self.name)
        if self._concolic is None:
            return
        log = self._concolic.log
        self.stats.extra["concretised"] += log.concretised
        sides = {(c.site, c.taken) for c in log.conditions}
        if self._current is not None:
            confirmed = self._current.expect in sides
            self.stats.extra["confirmed" if confirmed else "unconfirmed"] += 1
            if not confirmed and self._current.ask is not None:
                self._ask_fp(self._current.ask, first=True)
        self.taken |= sides
        if result.divergence is None:
            self._plan_from(result, log.conditions)

    def engine_report(self) -> dict[str, dict[str, int]]:
        return {self.name: self.stats.as_json()}

    def state(self) -> dict:
        """What this strategy learnt, for a resumed campaign (see dnsse.search.saved_learning)."""
        return {
            "stats": stats_state(self.stats),
            "plans": [_plan_json(plan) for plan in self.plans],
            "taken": sorted(_side_json(side) for side in self.taken),
            "tries": sorted([_side_json(side), count] for side, count in self.tries.items()),
            "fp_undecided_in_a_row": self.fp_undecided_in_a_row,
            # hybrid saves the corpus it shares once, itself.
            "corpus": corpus_state(self.corpus) if self.admits else None,
        }

    def restore(self, state: dict, rerun: Rerun) -> None:
        restore_stats(self.stats, state["stats"])
        asks = _Asks(rerun)
        self.plans = deque(
            Plan(choices_from(plan["choices"]), _side(plan["expect"]), asks.rebuilt(plan["ask"]))
            for plan in state["plans"]
        )
        self.taken = {_side(side) for side in state["taken"]}
        self.tries = {_side(side): int(count) for side, count in state["tries"]}
        self.fp_undecided_in_a_row = int(state.get("fp_undecided_in_a_row", 0))  # absent: saved before it was kept
        if state["corpus"] is not None:
            restore_corpus(self.corpus, state["corpus"], rerun)
        if self.plans:
            # Every execution draws the same input slots; plans are solved over them.
            self._slots = rerun(self.plans[0].choices, True).slots
        elif len(self.corpus):
            self._slots = rerun(self.corpus.entries[0].choices, True).slots

    def _plan_from(self, result, conditions: list[Condition]) -> None:  # type: ignore[no-untyped-def]
        positions = input_positions(result.choices)
        if len(positions) != len(self._slots):
            return
        constraints = bounds(list({id(slot.parameter): slot.parameter for slot in self._slots}.values()))
        by_name = {
            variable_name(slot.parameter, slot.element): (position, slot)
            for position, slot in zip(positions, self._slots)
        }
        asked = 0
        rounding = dict(self._concolic.log.rounding) if self._concolic is not None else {}
        for k, condition in enumerate(conditions):
            other: Side = (condition.site, not condition.taken)
            if other in self.taken or self.tries.get(other, 0) >= TRIES_PER_BRANCH:
                continue
            if self._defaults and self.share is not None and not _owns(self.share, other):
                continue
            if asked >= QUERIES_PER_EXECUTION:
                break
            asked += 1
            self.tries[other] = self.tries.get(other, 0) + 1
            self.stats.extra["queries"] += 1
            ask = Ask(Query(conditions[:k], condition), constraints, rounding, list(result.choices), by_name, other)
            model = solve(ask.query, constraints)
            if model is None:
                if _has_real(condition.expr):
                    self._ask_fp(ask, first=False)
                continue
            self.stats.extra["solved"] += 1
            self.plans.append(Plan(_planned(ask, model), other, ask))

    def _ask_fp(self, ask: Ask, first: bool) -> None:
        """The query again in floating point; its plan runs next (``first``) or in turn."""
        if self.fp_undecided_in_a_row >= FP_UNDECIDED_BEFORE_GIVING_UP:
            return
        self.stats.extra["fp_queries"] += 1
        query = ask.query
        target = z3.Not(query.target.expr) if query.target.taken else query.target.expr
        prefix = [c.expr if c.taken else z3.Not(c.expr) for c in query.prefix]
        try:
            model = solve_fp(prefix + [target], ask.constraints, ask.rounding, FP_QUERY_TIMEOUT_MS)
        except Unsupported:
            self.stats.extra["fp_unsupported"] += 1
            return
        except Undecided:
            self.fp_undecided_in_a_row += 1
            return
        self.fp_undecided_in_a_row = 0
        if model is None:
            return
        self.stats.extra["fp_solved"] += 1
        plan = Plan(_planned(ask, model), ask.other)
        if first:
            self.plans.appendleft(plan)
        else:
            self.plans.append(plan)


def _owns(share: tuple[int, int], side: Side) -> bool:
    """Whether worker ``share[0]`` of ``share[1]`` asks for ``side`` (a stable hash divides the sides)."""
    worker, workers = share
    return zlib.crc32(json.dumps(_side_json(side)).encode()) % workers == worker


def _planned(ask: Ask, model: dict[str, int | float]) -> list[Choice]:
    """The run ``ask`` came from with the model's input values in place of its own."""
    plan = list(ask.base)
    for name, value in model.items():
        if name not in ask.by_name:
            continue
        position, slot = ask.by_name[name]
        index = slot.domain.index_of(value)
        if index is not None:
            plan[position] = Choice(ChoiceKind.INPUT, plan[position].options, index[0])
    return plan


def _has_real(expr: object) -> bool:
    """Whether a real-valued term occurs in ``expr`` (only those round)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if z3.is_real(node):
            return True
        stack.extend(node.children())  # type: ignore[attr-defined]
    return False


def _plan_json(plan: Plan) -> dict:
    # An ask holds z3 terms and rounding keyed by their ids, which JSON cannot hold: it is saved as the run
    # it came from and the position of its condition, and rebuilt at resume by running that run again.
    ask = plan.ask
    return {
        "choices": choices_json(plan.choices),
        "expect": _side_json(plan.expect),
        "ask": None if ask is None else {"base": choices_json(ask.base), "condition": len(ask.query.prefix)},
    }


class _Asks:
    """The asks of saved plans, rebuilt from concolic runs of the runs they came from (one run per base)."""

    def __init__(self, rerun: Rerun) -> None:
        self.rerun = rerun
        self._runs: dict[str, tuple[object, Concolic]] = {}

    def rebuilt(self, raw: dict | None) -> Ask | None:
        if raw is None:
            return None
        key = json.dumps(raw["base"])
        if key not in self._runs:
            concolic = Concolic()
            self._runs[key] = (self.rerun(choices_from(raw["base"]), concolic), concolic)
        result, concolic = self._runs[key]
        conditions = concolic.log.conditions
        k = int(raw["condition"])
        positions = input_positions(result.choices)  # type: ignore[attr-defined]
        slots = result.slots  # type: ignore[attr-defined]
        if not 0 <= k < len(conditions) or len(positions) != len(slots):
            raise ValueError("a saved plan's run no longer makes the condition it was solved from")
        condition = conditions[k]
        constraints = bounds(list({id(slot.parameter): slot.parameter for slot in slots}.values()))
        by_name = {
            variable_name(slot.parameter, slot.element): (position, slot) for position, slot in zip(positions, slots)
        }
        other: Side = (condition.site, not condition.taken)
        query = Query(conditions[:k], condition)
        return Ask(query, constraints, dict(concolic.log.rounding), list(result.choices), by_name, other)  # type: ignore[attr-defined]


def _side_json(side: Side) -> list:
    (path, line, column), taken = side
    return [[path, line, column], taken]


def _side(raw: list) -> Side:
    (path, line, column), taken = raw
    return (str(path), int(line), int(column)), bool(taken)
