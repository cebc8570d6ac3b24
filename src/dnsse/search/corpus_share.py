"""The directed search divided among parallel workers: a sharded corpus, merged in rounds.

``fuzz``, ``symbolic`` and ``hybrid`` learn from every execution, so
workers that each kept their own corpus would find the same entries, solve
the same branches and mutate the same runs. Instead the work is divided as
mutually exclusive task distribution divides parallel fuzzing:

- Executions are grouped in **rounds** of :data:`ROUND` executions per
  worker. At the end of a round each worker sends what it learnt in it
  (:meth:`Sharing.learnt`): the corpus entries it found, the branches and
  interleavings it covered, and (symbolic) the branch sides taken and the
  queries asked.
- The parent (or the Ray driver) merges the workers' findings in worker
  order (:class:`Merger`): each entry gets the next **key**, and coverage
  and sides are united. Every worker applies the same merge
  (:meth:`Sharing.absorb`), so they all hold one corpus and one coverage map.
- Worker ``w`` of ``N`` **mutates only the entries whose key is w modulo N**
  (and the ones it found since the last merge); with none of its own it
  explores afresh. So no entry is mutated by two workers, and an entry one
  worker finds is mutated by the worker it falls to from the next round on.
- A query another worker already asked, or a branch side it already took,
  is not asked again after the merge. What every worker derives from its
  first run alike is divided: fuzz's boundary values of the inputs by
  position, symbolic's queries on the default inputs by branch side.

The exact guarantee: a worker's choices depend on the seed, the number of
workers and the merged rounds, which are deterministic, so **the same seed
with the same number of workers runs the same executions and finds the same
bugs** (unless a worker dies, a model advisor answers at its own pace, or
a time budget cuts the campaign). A different number of workers divides the
search differently, and may find other bugs first; ``random``, ``pct`` and
``pos`` keep their stronger guarantee (the same executions whatever the
number of workers).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dnsse.coverage.feedback import CoverageMap, Interleaving
from dnsse.engine.inputs import show_value
from dnsse.engine.operation import Access, Operation
from dnsse.search.corpus import Corpus, CorpusEntry
from dnsse.search.saved_learning import choices_from, choices_json
from dnsse.search.strategy import Strategy

# Executions per worker between two merges: often enough that a find is shared soon, rarely enough
# that the workers seldom wait for each other.
ROUND = 8


def round_of(index: int, workers: int) -> int:
    """The round of execution index ``index`` (workers run the indices w, w+N, ...)."""
    return index // (ROUND * workers)


def entry_json(entry: CorpusEntry) -> dict:
    return {
        "choices": choices_json(entry.choices),
        "inputs": {name: show_value(value) for name, value in entry.inputs.items()},
        "history": [
            [agent, operation.kind, [[name, access.value] for name, access in operation.objects], operation.detail]
            for agent, operation in entry.history
        ],
        "created_at": list(entry.created_at),
        "new_branches": entry.new_branches,
        "new_interleavings": entry.new_interleavings,
        "origin": entry.origin,
        "key": entry.key,
    }


def entry_from_json(raw: dict) -> CorpusEntry:
    return CorpusEntry(
        choices=choices_from(raw["choices"]),
        inputs=dict(raw["inputs"]),
        history=[
            (int(agent), Operation(str(kind), tuple((str(name), Access(access)) for name, access in objects), str(detail)))
            for agent, kind, objects, detail in raw["history"]
        ],
        created_at=[int(step) for step in raw["created_at"]],
        new_branches=int(raw["new_branches"]),
        new_interleavings=int(raw["new_interleavings"]),
        origin=str(raw["origin"]),
        key=None if raw["key"] is None else int(raw["key"]),
    )


def _branch_json(branch: tuple[str, tuple[int, int]]) -> list:
    path, (start, end) = branch
    return [path, start, end]


def _interleaving(raw: list) -> Interleaving:
    first, kind, second, other, name = raw
    return (int(first), str(kind), int(second), str(other), str(name))


def _side_key(side: tuple) -> tuple:
    (path, line, column), taken = side
    return ((str(path), int(line), int(column)), bool(taken))


def _side_json(side: tuple) -> list:
    (path, line, column), taken = side
    return [[path, line, column], taken]


def _side(raw: list) -> tuple:
    (path, line, column), taken = raw
    return ((str(path), int(line), int(column)), bool(taken))


@dataclass
class Sharing:
    """A worker's side: what it learnt since the last merge, and the merges it applies."""

    corpus: Corpus
    symbolic: object | None
    coverage: CoverageMap | None
    _branches: set = field(default_factory=set)
    _interleavings: set = field(default_factory=set)
    _taken: set = field(default_factory=set)
    _tries: dict = field(default_factory=dict)

    @classmethod
    def of(cls, strategy: Strategy, coverage: CoverageMap | None, worker: int, workers: int) -> Sharing | None:
        """The sharing of worker ``worker`` of ``workers`` for ``strategy``; ``None`` when it shares nothing."""
        shared = strategy.shared_learning()
        if shared is None:
            return None
        strategy.share_among(worker, workers)
        return cls(shared.corpus, shared.symbolic, coverage)

    def learnt(self) -> dict:
        """What this worker found since the last call, as JSON."""
        record: dict = {"entries": [entry_json(entry) for entry in self.corpus.fresh()]}
        if self.coverage is not None:
            branches = self.coverage.branches - self._branches
            interleavings = self.coverage.interleavings - self._interleavings
            self._branches |= branches
            self._interleavings |= interleavings
            record["branches"] = sorted(_branch_json(branch) for branch in branches)
            record["interleavings"] = sorted(list(pair) for pair in interleavings)
        if self.symbolic is not None:
            taken = self.symbolic.taken - self._taken  # type: ignore[attr-defined]
            self._taken |= taken
            record["taken"] = sorted(_side_json(side) for side in taken)
            tries = {side: n for side, n in self.symbolic.tries.items() if self._tries.get(side) != n}  # type: ignore[attr-defined]
            self._tries.update(tries)
            record["tries"] = sorted([_side_json(side), n] for side, n in tries.items())
        return record

    def settled(self) -> None:
        """Everything the strategy and coverage map hold counts as shared: so they stand after a merge.

        A worker resumed at the start of a round (see dnsse.campaign.local_progress)
        has applied every merge before it, and learnt nothing since.
        """
        if self.coverage is not None:
            self._branches = set(self.coverage.branches)
            self._interleavings = set(self.coverage.interleavings)
        if self.symbolic is not None:
            self._taken = set(self.symbolic.taken)  # type: ignore[attr-defined]
            self._tries = dict(self.symbolic.tries)  # type: ignore[attr-defined]

    def absorb(self, merged: dict) -> None:
        """Apply a merge of every worker's findings (this worker's included), as :class:`Merger` made it."""
        self.corpus.merged([entry_from_json(raw) for raw in merged["entries"]])
        if self.coverage is not None:
            branches = {(str(path), (int(start), int(end))) for path, start, end in merged.get("branches", [])}
            interleavings = {_interleaving(raw) for raw in merged.get("interleavings", [])}
            self.coverage.branches |= branches
            self.coverage.interleavings |= interleavings
            self._branches |= branches
            self._interleavings |= interleavings
        if self.symbolic is not None:
            taken = {_side(raw) for raw in merged.get("taken", [])}
            self.symbolic.taken |= taken  # type: ignore[attr-defined]
            self._taken |= taken
            tries = self.symbolic.tries  # type: ignore[attr-defined]
            for raw, count in merged.get("tries", []):
                side = _side(raw)
                tries[side] = max(tries.get(side, 0), int(count))
                self._tries[side] = tries[side]


@dataclass
class Merger:
    """The parent's side: the workers' findings of one round, merged in worker order."""

    keys: int = 0
    _branches: set = field(default_factory=set)
    _interleavings: set = field(default_factory=set)
    _taken: set = field(default_factory=set)
    _tries: dict = field(default_factory=dict)
    entries: int = 0  # entries merged so far
    merges: int = 0

    def merge(self, learnt: list[dict]) -> dict:
        """One merge of the workers' :meth:`Sharing.learnt` records (in worker order)."""
        entries = []
        for record in learnt:
            for raw in record["entries"]:
                entries.append({**raw, "key": self.keys})
                self.keys += 1
        self.entries += len(entries)
        self.merges += 1
        branches = {tuple(raw) for record in learnt for raw in record.get("branches", [])} - self._branches
        self._branches |= branches
        interleavings = {tuple(raw) for record in learnt for raw in record.get("interleavings", [])} - self._interleavings
        self._interleavings |= interleavings
        taken = {_side_key(_side(raw)) for record in learnt for raw in record.get("taken", [])} - self._taken
        self._taken |= taken
        tries: dict = {}
        for record in learnt:
            for raw, count in record.get("tries", []):
                side = _side(raw)
                if int(count) > self._tries.get(side, 0):
                    self._tries[side] = tries[side] = int(count)
        return {
            "entries": entries,
            "branches": sorted(list(raw) for raw in branches),
            "interleavings": sorted(list(raw) for raw in interleavings),
            "taken": sorted(_side_json(side) for side in taken),
            "tries": sorted([_side_json(side), count] for side, count in tries.items()),
        }

    def state(self) -> dict:
        """What it merged so far, as JSON, for a resumed campaign to merge on from."""
        return {
            "keys": self.keys,
            "entries": self.entries,
            "merges": self.merges,
            "branches": sorted(list(raw) for raw in self._branches),
            "interleavings": sorted(list(raw) for raw in self._interleavings),
            "taken": sorted(_side_json(side) for side in self._taken),
            "tries": sorted([_side_json(side), count] for side, count in self._tries.items()),
        }

    @classmethod
    def restored(cls, state: dict) -> Merger:
        """The merger :meth:`state` saved."""
        return cls(
            keys=int(state["keys"]),
            entries=int(state["entries"]),
            merges=int(state["merges"]),
            _branches={(str(path), int(start), int(end)) for path, start, end in state["branches"]},
            _interleavings={_interleaving(raw) for raw in state["interleavings"]},
            _taken={_side_key(_side(raw)) for raw in state["taken"]},
            _tries={_side(raw): int(count) for raw, count in state["tries"]},
        )
