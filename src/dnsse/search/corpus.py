"""The corpus of coverage-guided search: executions worth mutating, and how well each paid off.

An entry is kept when its execution took a branch or ordered a pair of
dependent operations in a way no earlier execution had (see
:mod:`dnsse.coverage.feedback`). It holds what an editor needs: the input
values, the full choice sequence, and the steps with their races, so that a
mutation can change a value, splice two runs, or reverse a race by
:func:`~dnsse.search.schedules.schedule_for`.

The power schedule gives more mutations to entries whose children recently
found new coverage (AFLFast's idea, with a decaying score instead of
AFLFast's path frequencies): each pick costs an entry a little of its
score, each new find of a child adds to it.

With parallel workers the corpus is sharded, as mutually exclusive task
distribution does for parallel fuzzing: every entry gets a key from the
parent in the order it merged the workers' finds, and worker ``w`` of ``N``
mutates only the entries whose key is ``w`` modulo ``N``, besides the ones
it found itself since the last merge (see :mod:`dnsse.search.corpus_share`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from dnsse.coverage.feedback import Race, races
from dnsse.engine.choices import Choice
from dnsse.engine.operation import Operation

# Score an entry starts with, and its floor: an old entry is picked rarely, never never.
INITIAL_SCORE = 1.0
MINIMUM_SCORE = 0.05
PICK_DECAY = 0.9
# Most entries kept; beyond it the entry with the lowest score leaves.
CAPACITY = 512


@dataclass
class CorpusEntry:
    choices: list[Choice]
    inputs: dict[str, object]
    history: list[tuple[int, Operation]]
    created_at: list[int]
    new_branches: int
    new_interleavings: int
    # The engine that produced it (fuzz, symbolic, pct, ...), for the report and the advisor.
    origin: str
    # The order in which the parent merged it (None: found by this worker since the last merge).
    key: int | None = None
    score: float = INITIAL_SCORE
    picks: int = 0
    finds: int = 0
    _races: list[Race] | None = None

    @property
    def races(self) -> list[Race]:
        if self._races is None:
            self._races = races(self.history)
        return self._races


class Corpus:
    def __init__(self) -> None:
        self.entries: list[CorpusEntry] = []
        # (this worker, workers) when the corpus is sharded among parallel workers.
        self.share: tuple[int, int] | None = None

    def __len__(self) -> int:
        return len(self.entries)

    def add(self, entry: CorpusEntry) -> None:
        self.entries.append(entry)
        if len(self.entries) > CAPACITY:
            self.entries.remove(min(self.entries, key=lambda e: e.score))

    def mine(self, entry: CorpusEntry) -> bool:
        """Whether this worker mutates ``entry`` (every entry is, without sharding)."""
        if self.share is None or entry.key is None:
            return True
        worker, workers = self.share
        return entry.key % workers == worker

    def has_share(self) -> bool:
        """Whether any entry is this worker's to mutate."""
        return any(self.mine(entry) for entry in self.entries)

    def pick(self, rng: random.Random, anywhere: bool = False) -> CorpusEntry:
        """An entry of this worker's share (``anywhere``: of the whole corpus), with probability
        proportional to its score; picking it lowers the score."""
        entries = [e for e in self.entries if anywhere or self.mine(e)] or self.entries
        entry = rng.choices(entries, weights=[e.score for e in entries])[0]
        entry.picks += 1
        entry.score = max(MINIMUM_SCORE, entry.score * PICK_DECAY)
        return entry

    def fresh(self) -> list[CorpusEntry]:
        """The entries this worker found since the parent last merged."""
        return [entry for entry in self.entries if entry.key is None]

    def merged(self, entries: list[CorpusEntry]) -> None:
        """The parent's merge of every worker's finds (this worker's own among them) replaces its fresh ones."""
        self.entries = [entry for entry in self.entries if entry.key is not None]
        for entry in entries:
            self.add(entry)

    @staticmethod
    def credit(parent: CorpusEntry, new_coverage: int) -> None:
        """A child of ``parent`` found ``new_coverage`` new branches or interleavings."""
        if new_coverage > 0:
            parent.finds += 1
            parent.score += 1.0 + min(new_coverage, 10) / 2


@dataclass
class EngineStats:
    """What one engine did in a campaign: the per-engine lines of the report."""

    executions: int = 0
    new_branches: int = 0
    new_interleavings: int = 0
    bugs: int = 0
    extra: dict[str, int] = field(default_factory=dict)
    first_bug_execution: int | None = None
    _signatures: set = field(default_factory=set)

    def count(self, result: Any, execution: int | None = None) -> None:
        """One more execution (number ``execution`` of the campaign, from 1); its new coverage and new bug."""
        self.executions += 1
        feedback = result.feedback
        if feedback is not None:
            self.new_branches += feedback.new_branches
            self.new_interleavings += feedback.new_interleavings
        if result.bug is not None and result.bug.signature() not in self._signatures:
            self._signatures.add(result.bug.signature())
            self.bugs += 1
            if self.first_bug_execution is None:
                self.first_bug_execution = execution

    def as_json(self) -> dict[str, int]:
        return {
            "executions": self.executions,
            "new_branches": self.new_branches,
            "new_interleavings": self.new_interleavings,
            "bugs": self.bugs,
            "first_bug_execution": self.first_bug_execution,
            **self.extra,
        }


def admit(corpus: Corpus, result: Any, origin: str) -> CorpusEntry | None:
    """Keep ``result`` in ``corpus`` when it added coverage; the entry, or ``None``."""
    feedback = result.feedback
    if feedback is None or not feedback.interesting or result.divergence is not None:
        return None
    entry = CorpusEntry(
        choices=list(result.choices),
        inputs=dict(result.inputs),
        history=list(result.history),
        created_at=list(result.created_at),
        new_branches=feedback.new_branches,
        new_interleavings=feedback.new_interleavings,
        origin=origin,
    )
    corpus.add(entry)
    return entry
