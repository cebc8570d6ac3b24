"""Which GPU work is ordered before which: vector clocks over streams, and the buffers they touched.

A rank's GPU work runs on *timelines*: its default stream (which is also
the host's: the host reads a tensor through a kernel on its current
stream, and torch synchronizes that stream for the read), every stream the
program creates, and each NCCL stream. Each kernel advances its timeline's
own entry of a vector clock; ``wait_stream``, ``wait_event`` and a
collective's enqueue join one timeline's clock into another's, and a
synchronization on the host (``Event.synchronize``, ``Stream.synchronize``,
``torch.cuda.synchronize``) joins into what the host knows finished, which
every kernel issued afterwards starts after.

:class:`AccessLog` keeps, per tensor storage, the kernels that touched it;
a new kernel that reads what another timeline wrote, or writes what
another timeline read or wrote, without that kernel being ordered before
it, is a :class:`Race`. This is the judgement torch's CUDA sanitizer makes
from the kernels a GPU happened to run, made here from the program's
orderings alone, so it holds for every schedule.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(eq=False)
class Timeline:
    """One stream of one rank: the kernels issued on it run in issue order."""

    key: str
    # What a report calls it, e.g. "stream 1 (created at f.py:12)".
    label: str
    clock: dict[str, int] = field(default_factory=dict)
    tick: int = 0

    def advance(self) -> int:
        """One more kernel on this timeline: its tick."""
        self.tick += 1
        self.clock[self.key] = self.tick
        return self.tick

    def join(self, other: dict[str, int]) -> None:
        """Everything ``other`` covers is ordered before the next kernel here."""
        clock = self.clock
        for key, tick in other.items():
            if clock.get(key, 0) < tick:
                clock[key] = tick

    def knows(self, key: str, tick: int) -> bool:
        """Is kernel ``tick`` of timeline ``key`` ordered before the next kernel here?"""
        return key == self.key or self.clock.get(key, 0) >= tick


@dataclass(slots=True)
class Access:
    """One kernel's read or write of a byte range."""

    timeline: str
    label: str
    tick: int
    write: bool
    start: int
    end: int
    op: str
    site: str

    def describe(self) -> str:
        verb = "writes" if self.write else "reads"
        return f"{self.op} on {self.label} {verb} it at {self.site}"


@dataclass(frozen=True)
class Race:
    """Two accesses of one buffer, at least one a write, neither ordered before the other."""

    earlier: Access
    later: Access


@dataclass(eq=False)
class AccessLog:
    """Per storage (by base address), the accesses a later kernel must be ordered after."""

    by_storage: dict[int, list[Access]] = field(default_factory=dict)

    def record(self, base: int, timeline: Timeline, access: Access) -> Race | None:
        """Log ``access`` by the next kernel of ``timeline``; the race it makes with a logged access, if any."""
        logged = self.by_storage.get(base)
        if logged is None:
            self.by_storage[base] = [access]
            return None
        for old in logged:
            if (old.write or access.write) and old.start < access.end and access.start < old.end:
                if not timeline.knows(old.timeline, old.tick):
                    return Race(old, access)
        # What the new access covers and is ordered after can no longer race with anything it does not.
        logged[:] = [
            old
            for old in logged
            if not (
                access.start <= old.start
                and old.end <= access.end
                and timeline.knows(old.timeline, old.tick)
                and (access.write or not old.write)
            )
        ]
        logged.append(access)
        return None

    def clear(self) -> None:
        """Everything logged is ordered before every later kernel (the host synchronized the device)."""
        self.by_storage.clear()
