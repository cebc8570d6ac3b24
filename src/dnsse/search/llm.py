"""``llm``: advisor-guided search.

The advisors (the offline heuristics always, a language model when the user
names an endpoint) read a summary of the runs so far and predict orderings and
input values likely to break the program. Each execution tries the most
promising untried hint (its confidence scaled by how well hints of its kind
paid off, see :mod:`dnsse.advisor.ledger`), with random choices filling the
rest of the schedule; with no hint left, the execution is a plain random one
whose steps feed the next round of advice. An ordering hint becomes an order
of the steps of the last run through the schedule solver when that run
performed every step the hint names, and priorities otherwise (see
:mod:`dnsse.search.guided`). A hint that led to a bug or to an order of
dependent operations never seen before counts as useful. The inputs of its
executions are concolic (as :mod:`dnsse.search.symbolic`'s are), so that the
comparisons two ranks made at one line can be solved apart (see
:mod:`dnsse.advisor.divergence`).

A hint that did not find a bug may need another context: other input values,
or another prefix of the run before its operations. It is tried again, up to
``MAX_RETRIES`` times, the least tried first and of those the useful ones
(new behaviour) and then the most promising, each time under the next
boundary value of an input (see :meth:`LlmStrategy._retry_inputs`) and a
fresh seed, and, for an ordering, ordered in another recent run than before
(its inputs, its prefix). Retries take at most ``RETRY_SHARE`` of the guided
executions while untried hints remain, and every execution once none remain.
"""

from __future__ import annotations

import heapq
from collections import Counter, deque

from dnsse.advisor.actor_calls import state_changing_methods
from dnsse.advisor.divergence import diverging_inputs
from dnsse.advisor.hints import DelayHint, FaultHint, Hint, InputHint, OrderingHint
from dnsse.advisor.ledger import Ledger, shape_of
from dnsse.advisor.model import ModelAdvisor
from dnsse.advisor.offline import OfflineAdvisor, boundary_inputs
from dnsse.advisor.stats import MAX_EXAMPLES, MAX_FOUND, AdvisorStats
from dnsse.advisor.steps import StepLog
from dnsse.advisor.summary import InputSpec, RunSummary, code_lines
from dnsse.engine.choices import ChoiceKind
from dnsse.search.advisor_setup import AdvisorSetup
from dnsse.search.guided import GuidedChooser
from dnsse.search.recent_runs import RecentRun
from dnsse.search.saved_advice import advice_state, restore_advice
from dnsse.search.saved_learning import Rerun
from dnsse.search.schedules import Constraint, Schedule, schedule_for
from dnsse.search.strategy import Strategy, execution_seed
from dnsse.symbolic.concolic import Concolic, bounds


# How often a useful hint is tried again, and the share of guided executions retries may take.
MAX_RETRIES = 3
RETRY_SHARE = 0.25

# Recent executions kept for the solver: a hint is ordered in the latest one that performed its steps.
RECENT_RUNS = 8


class LlmStrategy(Strategy):
    name = "llm"

    def __init__(self, seed: int, setup: AdvisorSetup = AdvisorSetup()) -> None:
        self.seed = seed
        self.summary = RunSummary(specs=list(setup.specs))
        if setup.source_path is not None:
            self.summary.code = code_lines(setup.source_path)
            self.summary.state_changes = state_changing_methods(setup.source_path)
        self.ledger = Ledger()
        self.offline = OfflineAdvisor()
        self.model: ModelAdvisor | None = None
        if setup.model is not None:
            if setup.source_path is None:
                raise ValueError("a model advisor needs the program's source")
            self.model = ModelAdvisor(setup.model, setup.source_path, setup.on_notice)
        # Attached to every execution by the campaign: the steps the summary is built from.
        self.log = StepLog()
        self._queue: list[tuple[float, int, Hint]] = []
        self.next_order = 0  # ties of priority go in the order hints were queued
        self._slots: list = []
        self._recent: deque[RecentRun] = deque(maxlen=RECENT_RUNS)
        self._current: tuple[GuidedChooser, Hint | None] | None = None
        self._tries: Counter = Counter()  # hint -> executions it was tried in
        self._retries: list[Hint] = []  # hints that found no bug, to try again
        self._paid: set[Hint] = set()  # hints whose execution showed new behaviour
        self._guided = 0  # executions that tried a hint
        self._retried = 0  # of those, retries
        self._context = ""  # the input context of the current execution's retry, for the report
        self._concolic: Concolic | None = None  # the inputs of the execution chooser_with made
        self._split_asked: set[tuple] = set()  # (site, agent, agent) already asked to diverge

    @property
    def monitors(self) -> list[StepLog]:
        return [self.log]

    @property
    def advisors(self) -> list:
        # The model first: of two hints as promising, the one that read the code goes first.
        return ([self.model] if self.model is not None else []) + [self.offline]

    def advisor_report(self) -> dict[str, dict]:
        """Each advisor's calls, tokens, latency, cache hits and hints proposed, discarded, tried and useful."""
        return {advisor.name: advisor.stats.to_json() for advisor in self.advisors}

    def chooser_for(self, execution: int) -> GuidedChooser:
        self.take_advice()
        hint = self.next_hint()
        return self.chooser_with(hint, execution_seed(self.seed, execution))

    def take_advice(self) -> None:
        """Queue what the advisors say about the runs so far (a model's answer may come later)."""
        for advisor in self.advisors:
            for hint in advisor.advise(self.summary):
                heapq.heappush(self._queue, (-self.ledger.priority(hint), self.next_order, hint))
                self.next_order += 1

    def next_hint(self) -> Hint | None:
        """The most promising hint not tried yet (re-ranked by what paid off since it was queued), or a retry."""
        if self._retries and (not self._queue or self._retried < RETRY_SHARE * (self._guided + 1)):
            self._retries.sort(key=lambda hint: (self._tries[hint], hint not in self._paid, -self.ledger.priority(hint)))
            self._retried += 1
            return self._retries.pop(0)
        if not self._queue:
            return None
        self._queue = [(-self.ledger.priority(hint), order, hint) for _, order, hint in self._queue]
        heapq.heapify(self._queue)
        return heapq.heappop(self._queue)[2]

    @property
    def has_hints(self) -> bool:
        return bool(self._queue or self._retries)

    def chooser_with(self, hint: Hint | None, seed: int) -> GuidedChooser:
        self._context = ""
        if isinstance(hint, OrderingHint):
            schedule, values = self._solved(hint)
            plan = [] if schedule else self._retry_inputs(hint)
            chooser = GuidedChooser(seed, ordering=hint, schedule=schedule, values=values, input_plan=plan)
        elif isinstance(hint, DelayHint):
            chooser = GuidedChooser(seed, delay=hint, input_plan=self._retry_inputs(hint))
        elif isinstance(hint, FaultHint):
            chooser = GuidedChooser(seed, fault=hint, input_plan=self._retry_inputs(hint))
        elif isinstance(hint, InputHint):
            chooser = GuidedChooser(seed, input_plan=self._input_plan(hint))
        else:
            chooser = GuidedChooser(seed)
        # Concolic inputs: the comparisons they meet, and who made them, show where ranks may diverge.
        self._concolic = Concolic()
        chooser.input_value = self._concolic.input_value
        self._current = (chooser, hint)
        return chooser

    def observe(self, result) -> None:  # type: ignore[no-untyped-def]
        hint = self._current[1] if self._current is not None else None
        self._current = None
        orders_before = len(self.summary.orders)
        self.learn(result)
        if hint is None:
            return
        useful = result.bug is not None or len(self.summary.orders) > orders_before
        self.ledger.record(hint, useful)
        stats = self._stats_of(hint)
        stats.tried += 1
        stats.useful += int(useful)
        stats.retried += int(self._tries[hint] > 0)
        if len(stats.first_tried) < MAX_EXAMPLES:
            again = f" (try {self._tries[hint] + 1})" if self._tries[hint] else ""
            stats.first_tried.append(f"{shape_of(hint)}: {hint.describe()}{again}")
        self._guided += 1
        self._tries[hint] += 1
        if useful:
            self._paid.add(hint)
        if result.bug is None and self._tries[hint] <= MAX_RETRIES:
            self._retries.append(hint)
        if result.bug is not None and len(stats.found_bugs) < MAX_FOUND:
            retry = f" (try {self._tries[hint]}{self._context})" if self._tries[hint] > 1 else ""
            stats.found_bugs.append(f"{shape_of(hint)}: {hint.describe()}{retry}")

    def learn(self, result) -> None:  # type: ignore[no-untyped-def]
        """Add an execution to the summary, whoever chose its schedule (hybrid: another engine)."""
        self._learn_inputs(result)
        values = [(choice.kind, choice.index) for choice in result.choices if choice.kind != ChoiceKind.AGENT]
        self._recent.append(
            RecentRun(
                list(result.history), list(result.created_at), self.log.steps, self.log.positions, values,
                list(result.choices),
            )
        )
        bug = result.bug.render().splitlines()[0] if result.bug is not None else None
        askers = [choice.chosen.agent for choice in result.choices if choice.kind == ChoiceKind.FAULT and choice.chosen]
        self.summary.observe(self.log.steps, bug, askers)
        concolic, self._concolic = self._concolic, None
        if concolic is not None and getattr(result, "divergence", None) is None and self._slots:
            constraints = bounds(list({id(slot.parameter): slot.parameter for slot in self._slots}.values()))
            self.summary.divergences += diverging_inputs(concolic.log.conditions, constraints, self._split_asked)

    def state(self) -> dict:
        """What the advisors learnt (summary, queued hints, ledger, recent runs), as JSON (see dnsse.search.saved_advice)."""
        return advice_state(self)

    def restore(self, state: dict, rerun: Rerun) -> None:
        restore_advice(self, state, rerun)

    def close(self) -> None:
        if self.model is not None:
            self.model.close()

    def _solved(self, hint: OrderingHint) -> tuple[list[int], list[tuple[str, int]]]:
        """The solver's order of a recent run's steps that meets ``hint``, with that run's other choices.

        Empty when no recent run performed every step the hint names, or none can be reordered to meet it.
        A retry skips the runs it was ordered in before (by count: the n-th try takes the n-th that fits).
        """
        skip = self._tries[hint]
        for run in reversed(self._recent):
            positions = _positions(run, hint)
            if positions is None:
                continue
            if skip > 0:
                skip -= 1
                continue
            constraints = [Constraint(before, after) for before, after in zip(positions, positions[1:])]
            solution = schedule_for(run.history, run.created_at, constraints)
            if isinstance(solution, Schedule):
                self._stats_of(hint).solved += 1
                return solution.agents, run.values
        return [], []

    def _stats_of(self, hint: Hint) -> AdvisorStats:
        return self.model.stats if self.model is not None and hint.source == self.model.name else self.offline.stats

    def _learn_inputs(self, result) -> None:  # type: ignore[no-untyped-def]
        self._slots = list(getattr(result, "slots", []))
        for slot in self._slots:
            if slot.parameter.name not in self.summary.inputs:
                self.summary.inputs[slot.parameter.name] = InputSpec.of(slot.parameter)

    def _retry_inputs(self, hint: Hint) -> list[int | None]:
        """Input answers for a retry of ``hint``: the n-th retry takes the n-th boundary value of an input.

        The ends of an input's range are where a program most often changes
        course, so a hint that paid off under one input is tried there next.
        The first try, and a program without inputs, leave every input random.
        """
        contexts = boundary_inputs(self.summary) if self._tries[hint] else []
        if not contexts:
            return []
        context = contexts[(self._tries[hint] - 1) % len(contexts)]
        self._context = f", {context.describe()}"
        return self._input_plan(context)

    def _input_plan(self, hint: InputHint) -> list[int | None]:
        """Answers for the execution's input choices: the hinted value's for its input, random elsewhere."""
        spec = self.summary.inputs[hint.name]
        indices = iter(spec.indices(hint.value))
        return [next(indices, None) if slot.parameter.name == hint.name else None for slot in self._slots]


def _positions(run: RecentRun, hint: OrderingHint) -> list[int] | None:
    """Where in ``run``'s history each operation of ``hint`` lies; ``None`` when one is missing."""
    positions = []
    for ref in hint.sequence:
        matching = [
            position for step, position in zip(run.steps, run.positions) if ref.matches(step.agent, step.kind, step.location)
        ]
        nth = (ref.occurrence or 1) - 1
        if nth >= len(matching):
            return None
        positions.append(matching[nth])
    return positions if len(set(positions)) == len(positions) else None
