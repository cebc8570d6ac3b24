"""Coverage as feedback: what one execution added to what the campaign has seen.

Two signals, both cheap enough to stay on in every execution of ``fuzz``,
``symbolic`` and ``hybrid``:

- **branches**: the branch arcs of the target's files (as coverage.py counts
  them) taken for the first time in the campaign. Raw line arcs are
  recorded by :class:`~dnsse.coverage.arcs.ArcRecorder`; only an execution
  that took a raw arc never seen before pays for normalizing its new arcs.
- **interleavings**: ordered pairs of dependent operations of different
  agents, in the order the execution performed them: who wrote an object
  before whom, which send a receive matched. A schedule that orders a racing
  pair the other way for the first time is new, even when it takes no new
  branch (the interleaving coverage of Wang et al.'s "Coverage guided
  systematic concurrency testing", ICSE 2011).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from dnsse.coverage.arcs import Arc, ArcRecorder, taken_branches
from dnsse.engine.operation import Access, Operation

# (earlier agent, its operation kind, later agent, its operation kind, object)
Interleaving = tuple[int, str, int, str, str]


@dataclass(frozen=True)
class Race:
    """Two dependent steps of different agents, by their positions in the execution's history."""

    first: int
    second: int
    pair: Interleaving


@dataclass
class Feedback:
    """What one execution added to the campaign's coverage."""

    new_branches: int = 0
    new_interleavings: int = 0

    @property
    def interesting(self) -> bool:
        return self.new_branches > 0 or self.new_interleavings > 0


def races(history: Sequence[tuple[int, Operation]]) -> list[Race]:
    """Every pair of dependent steps of different agents with no write between them on their object.

    A write (or sync) races with the last write and every read since; a read
    with the last write. Program order is not a race.
    """
    last_write: dict[str, tuple[int, int, str]] = {}
    reads: dict[str, list[tuple[int, int, str]]] = {}
    found = []
    for position, (agent, operation) in enumerate(history):
        for name, access in operation.objects:
            earlier = [last_write[name]] if name in last_write else []
            if access is not Access.READ:
                earlier += reads.get(name, [])
            for other_position, other_agent, other_kind in earlier:
                if other_agent != agent:
                    found.append(Race(other_position, position, (other_agent, other_kind, agent, operation.kind, name)))
            if access is Access.READ:
                reads.setdefault(name, []).append((position, agent, operation.kind))
            else:
                last_write[name] = (position, agent, operation.kind)
                reads.pop(name, None)
    return found


@dataclass
class CoverageMap:
    """Branches and interleavings a campaign has seen so far."""

    recorder: ArcRecorder
    branches: set[tuple[str, Arc]] = field(default_factory=set)
    interleavings: set[Interleaving] = field(default_factory=set)

    def add(self, run: ArcRecorder, history: Sequence[tuple[int, Operation]]) -> Feedback:
        """Merge one execution's arcs and interleavings; say what was new."""
        new_raw: dict[str, set[Arc]] = {}
        for path, arcs in run.arcs.items():
            seen = self.recorder.arcs.setdefault(path, set())
            fresh = arcs - seen
            if fresh:
                new_raw[path] = fresh
                seen.update(fresh)
        new_branches = {
            (path, arc) for path, arcs in new_raw.items() for arc in taken_branches(path, arcs)
        } - self.branches
        self.branches.update(new_branches)
        pairs = {race.pair for race in races(history)}
        new_pairs = pairs - self.interleavings
        self.interleavings.update(new_pairs)
        return Feedback(len(new_branches), len(new_pairs))

