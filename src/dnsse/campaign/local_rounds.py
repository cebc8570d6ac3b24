"""The rounds of a directed search divided among worker processes (see :mod:`dnsse.search.corpus_share`).

Workers report what they learnt in a round on their pipe to the parent (a
``learnt`` message). Once every running worker has reported the round, or
is past it (a replacement started after it), the parent merges the reports
in worker order and writes the merge as ``round-R.json`` into the pool's
directory, atomically (written aside, then renamed). A worker at the end of
round R waits for that file, applies every merge up to it in order, and
goes on; a replacement applies, as it starts, every merge written so far.
Files rather than a pipe from the parent: a worker reads the merge when it
is ready, so the parent never blocks writing to a busy worker while that
worker blocks writing its reports to the parent.

A campaign stopped for ``--resume`` (Ctrl-C, SIGTERM) stops at the start
of a round, where every worker has applied the same merges: the parent
writes the round in ``stop`` (one no worker has started), each worker runs
on to it and sends what it learnt (a ``boundary`` message), and the saved
state is one every worker and the parent's merger stood at together.
"""

from __future__ import annotations

import ctypes
import json
import multiprocessing
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from dnsse.search.corpus_share import Merger, Sharing, round_of

# How often a worker waiting for a merge looks for it.
WAIT_S = 0.0005


def _round_file(directory: Path, number: int) -> Path:
    return directory / f"round-{number}.json"


def _stop_file(directory: Path) -> Path:
    return directory / "stop"


def write_round(directory: Path, number: int, merge_text: str) -> None:
    """Round ``number``'s merge (JSON) where workers look for it, atomically: written aside, then renamed."""
    path = _round_file(directory, number)
    aside = path.with_suffix(".part")
    aside.write_text(merge_text, encoding="utf-8")
    os.replace(aside, path)


@dataclass
class RoundWorker:
    """A worker's side: the merges it applied, and waiting for the next."""

    directory: Path
    sharing: Sharing
    applied: int = 0  # merges applied: rounds 0 .. applied-1

    def catch_up(self) -> None:
        """Apply every merge already written (a replacement, as it starts)."""
        while _round_file(self.directory, self.applied).exists():
            self._apply()

    def wait_for(self, number: int, stop: ctypes.c_bool) -> bool:
        """Apply every merge up to round ``number``, waiting for them; False when stopped while waiting."""
        parent = multiprocessing.parent_process()
        while self.applied <= number:
            while not _round_file(self.directory, self.applied).exists():
                if stop.value or (parent is not None and not parent.is_alive()):
                    return False
                time.sleep(WAIT_S)
            self._apply()
        return True

    def stops_at(self, number: int) -> bool:
        """Whether the campaign stops at the start of round ``number``."""
        try:
            return int(_stop_file(self.directory).read_text(encoding="utf-8")) <= number
        except (FileNotFoundError, ValueError):
            return False

    def _apply(self) -> None:
        self.sharing.absorb(json.loads(_round_file(self.directory, self.applied).read_text(encoding="utf-8")))
        self.applied += 1


@dataclass
class RoundKeeper:
    """The parent's side: which worker is in which round, the reports of each round, the merges."""

    directory: Path
    workers: int
    merger: Merger = field(default_factory=Merger)
    merged: int = 0  # rounds merged: 0 .. merged-1
    _at: dict[int, int] = field(default_factory=dict)  # worker -> the round it runs now
    _reports: dict[int, dict[int, dict]] = field(default_factory=dict)  # round -> worker -> what it learnt

    def started(self, worker: int, start: int) -> None:
        """Worker ``worker`` (re)starts at execution index ``start``."""
        self._at[worker] = round_of(start, self.workers)

    def learnt(self, worker: int, number: int, record: dict) -> None:
        self._reports.setdefault(number, {})[worker] = record
        self._at[worker] = max(self._at.get(worker, 0), number + 1)

    def settle(self, running: set[int]) -> None:
        """Merge every round that all running workers have reported or passed."""
        while True:
            number = self.merged
            reports = self._reports.get(number, {})
            past = [worker for worker in running if self._at.get(worker, 0) > number]
            if not reports and not past:
                return  # nobody has finished this round yet
            if any(worker not in reports and self._at.get(worker, 0) <= number for worker in running):
                return
            merge = self.merger.merge([reports[worker] for worker in sorted(reports)])
            self._reports.pop(number, None)
            write_round(self.directory, number, json.dumps(merge))
            self.merged += 1

    def stop(self, running: set[int]) -> None:
        """Stop the workers at the start of the first round none of them can have started yet.

        A worker runs round R only once round R-1 is merged, which needs every
        running worker's report of R-1: so none is past the round after the
        latest one a running worker is known to be in.
        """
        if _stop_file(self.directory).exists():
            return
        number = max((self._at.get(worker, 0) for worker in running), default=self.merged) + 1
        path = _stop_file(self.directory)
        aside = path.with_suffix(".part")
        aside.write_text(str(number), encoding="utf-8")
        os.replace(aside, path)

    def state(self) -> dict:
        """The rounds merged and the merger, as JSON: where a resumed campaign merges on from."""
        return {"merged": self.merged, "merger": self.merger.state()}

    @classmethod
    def restored(cls, directory: Path, workers: int, state: dict) -> RoundKeeper:
        return cls(directory, workers, merger=Merger.restored(state["merger"]), merged=int(state["merged"]))

    def notes(self) -> dict[str, int]:
        """What the division shared, for the report's search counts."""
        return {"merged_rounds": self.merged, "shared_corpus_entries": self.merger.entries}
