"""``fuzz``: coverage-guided mutation of inputs and schedules.

Each execution either explores afresh (uniformly random choices) or takes a
corpus entry chosen by the power schedule and edits it with one mutation
(:mod:`dnsse.search.mutations`): a new input value, a splice, a reversed
race, a moved preemption (which may also let a timed wait expire: that is a
scheduling choice), another message match or fault, or havoc. The edited sequence is followed by a
:class:`~dnsse.search.planned.PlannedChooser` and finished at random. An
execution that takes a new branch or orders a dependent pair in a new way
joins the corpus and credits the entry it came from.

Input values are handed to the program as concolic stand-ins, so the
comparisons they meet feed the mutation dictionary (CmpLog).
"""

from __future__ import annotations

import random
from collections import deque

from dnsse.engine.choices import Chooser, ChoiceKind, FirstChooser
from dnsse.engine.inputs import InputSlot
from dnsse.engine.rejection import large_for
from dnsse.search.corpus import Corpus, CorpusEntry, EngineStats, admit
from dnsse.search.planned import PlannedChooser
from dnsse.search.mutations import (
    Mutant,
    constant_mutants,
    flip_value,
    input_positions,
    havoc,
    move_preemption,
    mutate_input,
    probe_mutants,
    reverse_race,
    splice,
)
from dnsse.search.random_walk import RandomChooser
from dnsse.search.saved_learning import (
    Rerun,
    choices_from,
    choices_json,
    corpus_state,
    entry_state,
    restore_corpus,
    restore_stats,
    stats_state,
)
from dnsse.search.strategy import Division, SharedLearning, Strategy, execution_seed
from dnsse.symbolic.concolic import Concolic

# Share of executions that explore afresh instead of mutating an entry.
EXPLORE = 0.1
DICTIONARY_LIMIT = 256


def _magnitude(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return abs(float(value))


def _probed_value(mutant: Mutant, name: str, slots: list[InputSlot]) -> float | None:
    """The magnitude of the value a probe mutant gives input ``name``."""
    positions = input_positions(mutant.plan)
    for position, slot in zip(positions, slots):
        if slot.parameter.name == name:
            return _magnitude(slot.domain.value_of([mutant.plan[position].index]))
    return None


class FuzzStrategy(Strategy):
    name = "fuzz"
    division = Division.ROUNDS
    wants_feedback = True

    def __init__(self, seed: int, corpus: Corpus | None = None, admits: bool = True) -> None:
        """``admits``: keep interesting runs in ``corpus`` (``hybrid`` shares one corpus and admits itself)."""
        self.seed = seed
        self._execution = 0
        self.corpus = corpus if corpus is not None else Corpus()
        self.admits = admits
        self.stats = EngineStats()
        self.slots: list[InputSlot] = []
        self.dictionary: list[float] = []
        self._parent: CorpusEntry | None = None
        # Deterministic mutants run before random ones: range ends and new dictionary constants.
        self.pending: deque[Mutant] = deque()
        self._first: CorpusEntry | None = None
        self._concolic: Concolic | None = None
        # The deterministic mutant the current execution runs, if it runs one.
        self._mutant: Mutant | None = None
        # (this worker, workers) with parallel workers: each runs its share of the boundary mutants.
        self.share: tuple[int, int] | None = None

    def shared_learning(self) -> SharedLearning:
        return SharedLearning(self.corpus, None)

    def share_among(self, worker: int, workers: int) -> None:
        self.corpus.share = self.share = (worker, workers)

    @property
    def has_pending(self) -> bool:
        """Whether deterministic mutants (input probes, compared constants) wait to run."""
        return bool(self.pending)

    def chooser_for(self, execution: int) -> Chooser:
        self._execution = execution + 1
        rng = random.Random(execution_seed(self.seed, execution))
        fallback = RandomChooser(rng.randrange(2**63))
        self._concolic = Concolic()
        self._parent = None
        mutant = self.pending.popleft() if self.pending else None
        self._mutant = mutant
        if mutant is None and self.corpus.has_share() and rng.random() >= EXPLORE:
            self._parent = self.corpus.pick(rng)
            mutant = self.mutate(self._parent, rng)
        if mutant is None:
            return PlannedChooser([], fallback, stand_in=self._concolic.input_value)
        # A moved preemption is a PCT change point: after it, no further preemption.
        finish: Chooser = FirstChooser() if mutant.operator == "move preemption" else fallback
        return PlannedChooser(mutant.plan, finish, mutant.order, stand_in=self._concolic.input_value)

    def mutate(self, entry: CorpusEntry, rng: random.Random) -> Mutant | None:
        """One mutation of ``entry``; which kind is drawn, and the next kind tried when one does not apply."""
        operators = [
            lambda: mutate_input(entry, self.slots, self.dictionary, rng),
            lambda: mutate_input(entry, self.slots, self.dictionary, rng),
            lambda: reverse_race(entry, rng),
            lambda: reverse_race(entry, rng, adjacent=True),
            lambda: move_preemption(entry, rng),
            lambda: splice(entry, self.corpus.pick(rng, anywhere=True), rng) if len(self.corpus) > 1 else None,
            lambda: flip_value(entry, ChoiceKind.MATCH, rng),
            lambda: flip_value(entry, ChoiceKind.FAULT, rng),
            lambda: havoc(entry, rng),
        ]
        start = rng.randrange(len(operators))
        for offset in range(len(operators)):
            mutant = operators[(start + offset) % len(operators)]()
            if mutant is not None:
                return mutant
        return None

    def observe(self, result) -> None:  # type: ignore[no-untyped-def]
        self.slots = result.slots
        if result.rejected is not None and self._mutant is not None and self._mutant.operator.endswith(": probe"):
            self._drop_larger_probes(result)
        new_constants = self._learn_constants(self._concolic) if self._concolic is not None else []
        if self._first is None and result.divergence is None and self.slots:
            self._first = CorpusEntry(list(result.choices), dict(result.inputs), [], [], 0, 0, self.name)
            self._queue(probe_mutants(self._first, self.slots))
        if self._first is not None and new_constants:
            # The program's own constants are better aimed than any probe: they run first.
            self._queue(constant_mutants(self._first, self.slots, new_constants), first=True)
        self.stats.count(result, self._execution)
        feedback = result.feedback
        if feedback is not None and self._parent is not None:
            Corpus.credit(self._parent, feedback.new_branches + feedback.new_interleavings)
        if self.admits:
            admit(self.corpus, result, self.name)

    def _drop_larger_probes(self, rejected) -> None:  # type: ignore[no-untyped-def]
        """A probe too large for the program: the larger probes of the same input would be rejected too."""
        assert self._mutant is not None
        name = self._mutant.operator.split(":")[0].removeprefix("input ")
        size = _magnitude(rejected.inputs.get(name))
        slot = next((slot for slot in self.slots if slot.parameter.name == name), None)
        if size is None or slot is None or size <= large_for(slot.parameter.default):
            return
        kept = deque()
        for mutant in self.pending:
            value = _probed_value(mutant, name, self.slots)
            if mutant.operator == self._mutant.operator and value is not None and value >= size:
                continue
            kept.append(mutant)
        self.pending = kept

    def _queue(self, mutants: list[Mutant], first: bool = False) -> None:
        """Queue deterministic mutants (``first``: ahead of those queued); each parallel worker its share of them."""
        if self.share is not None:
            worker, workers = self.share
            mutants = mutants[worker::workers]
        if first:
            self.pending.extendleft(reversed(mutants))
        else:
            self.pending.extend(mutants)

    def engine_report(self) -> dict[str, dict[str, int]]:
        return {self.name: self.stats.as_json()}

    def state(self) -> dict:
        """What this strategy learnt, for a resumed campaign (see dnsse.search.saved_learning)."""
        return {
            "stats": stats_state(self.stats),
            "dictionary": list(self.dictionary),
            "pending": [
                {"plan": choices_json(m.plan), "order": m.order, "operator": m.operator} for m in self.pending
            ],
            "first": entry_state(self._first) if self._first is not None else None,
            # hybrid saves the corpus it shares once, itself.
            "corpus": corpus_state(self.corpus) if self.admits else None,
        }

    def restore(self, state: dict, rerun: Rerun) -> None:
        restore_stats(self.stats, state["stats"])
        self.dictionary = [float(value) for value in state["dictionary"]]
        self.pending = deque(
            Mutant(choices_from(m["plan"]), None if m["order"] is None else [int(a) for a in m["order"]], m["operator"])
            for m in state["pending"]
        )
        if state["corpus"] is not None:
            restore_corpus(self.corpus, state["corpus"], rerun)
        self._first = None
        if state["first"] is not None:
            # As observe() keeps it: its choices and inputs, no steps. Every execution draws the same input slots.
            choices = choices_from(state["first"]["choices"])
            first = rerun(choices, True)
            self._first = CorpusEntry(choices, dict(first.inputs), [], [], 0, 0, self.name)
            self.slots = first.slots
        elif len(self.corpus):
            self.slots = rerun(self.corpus.entries[0].choices, True).slots

    def _learn_constants(self, concolic: Concolic) -> list[float]:
        """Add the run's compared operands and nearby code constants to the dictionary; the new ones."""
        known = set(self.dictionary)
        new = []
        for value in sorted(concolic.log.operands | concolic.log.constants):
            if value not in known and len(self.dictionary) < DICTIONARY_LIMIT:
                self.dictionary.append(value)
                known.add(value)
                new.append(value)
        return new
