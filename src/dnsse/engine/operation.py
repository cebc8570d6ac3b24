"""What a step does: the operation an agent performs when it is scheduled.

Every scheduling point names the operation the agent is about to perform and
the objects it touches, so that strategies can tell dependent steps (same
object, not both reads) from independent ones. What a step touches beyond
what it announced (found while it runs) is added to its entry in the
execution's history (:meth:`dnsse.engine.execution.Execution.touch`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Access(enum.Enum):
    READ = "read"
    WRITE = "write"
    SYNC = "sync"
    # Gives back what only this agent holds (a lock's release): ordered like a
    # write, but never in a race with a SYNC (a take) of the same object, since
    # the two can never both be possible at once.
    RELEASE = "release"


def races_on_one_object(access: Access, other: Access) -> bool:
    """Whether two accesses of one object by different agents could be reordered to another outcome."""
    if access is Access.READ and other is Access.READ:
        return False
    return {access, other} != {Access.RELEASE, Access.SYNC}


# Not frozen, though never changed: a frozen dataclass's constructor sets each field through
# object.__setattr__, four times slower, and one is made at every scheduling point.
@dataclass(slots=True, unsafe_hash=True)
class Operation:
    """One pending operation of an agent.

    ``kind`` is a short name (``"all_reduce"``, ``"lock.acquire"``,
    ``"attr.store"``); ``objects`` pairs an object name with how it is touched;
    ``detail`` is text for people (reports, timelines).
    """

    kind: str
    objects: tuple[tuple[str, Access], ...] = ()
    detail: str = ""

    def depends_on(self, other: Operation) -> bool:
        """Two steps are dependent when they touch one object and not both read."""
        for name, access in self.objects:
            for other_name, other_access in other.objects:
                if name == other_name and not (access is Access.READ and other_access is Access.READ):
                    return True
        return False

    def touching(self, objects: tuple[tuple[str, Access], ...]) -> Operation:
        """This operation with more objects touched (a write wins over a read of one object)."""
        merged = dict(self.objects)
        for name, access in objects:
            if merged.get(name) in (None, Access.READ):
                merged[name] = access
        return Operation(self.kind, tuple(merged.items()), self.detail)


START = Operation("start")

CLOCK = "clock"
"""The object that stands for virtual time: sleeps and expiring timeouts write it."""

_EXPIRY_SUFFIX = ".timeout"


def expiry_of(operation: Operation, seconds: float) -> Operation:
    """The step in which a timed wait at ``operation`` gives up after ``seconds``.

    It touches what the wait touches (so it is dependent with the step that
    would satisfy the wait: a search that reorders the two sees both outcomes)
    and moves virtual time to the deadline.
    """
    return Operation(
        operation.kind + _EXPIRY_SUFFIX,
        operation.objects + ((CLOCK, Access.WRITE),),
        f"{operation.detail} (timeout after {seconds:g}s)" if operation.detail else f"timeout after {seconds:g}s",
    )


def is_expiry(operation: Operation) -> bool:
    """Whether ``operation`` is a timed wait giving up (see :func:`expiry_of`)."""
    return operation.kind.endswith(_EXPIRY_SUFFIX)
