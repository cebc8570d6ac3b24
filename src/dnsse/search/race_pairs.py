"""The pairs of program sites that one execution shows touching an object in conflict.

A **site** is where an agent stands when it takes a step, named so that it
means the same thing in another execution: the agent's role (its name without
numbers: every ``Thread-N (writer)`` is one role), the operation's kind and
its detail (the line of an attribute access, the lock of an acquire). Two
sites **conflict** when, in the observed execution, agents of them touched
one object and not both only read it, and neither agent created the other
after its own step (a value set before a thread starts is no race).

Accesses of data that both agents made holding one lock (a lockset, as
Eraser keeps) can never be adjacent: such a pair counts as guarded and goes
after the unguarded ones of its rank.

A :class:`RacingPair` orders two conflicting sites: the race-directed search
(:mod:`dnsse.search.race_directed`) tries to run the ``second`` site right
after the ``first``. The pairs that most often decide a bug come first, as in
RaceFuzzer (Sen, PLDI 2008), which aims each execution at one race a first
run showed:

0. another role's write right after a read that its agent, holding no lock,
   then writes back at the same line (an unlocked ``x += 1``): the other
   write is lost (an update under some lock, even a wrong one, ranks as any
   read: such a critical section more often fails by the order of sections);
1. another role's acquire right after a release of the same lock (a reader
   between a writer's two critical sections);
2. a read right after another role's write, or a write right after another
   role's read;
3. the same between agents of one role, two writes, and guarded pairs;
4. the rest (two acquires of one lock, ...).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from dnsse.engine.operation import CLOCK, Access, Operation

Site = tuple[str, str, str]
"""(role, operation kind, operation detail)."""

# Occurrences of one site on one object kept to look for a pair not ordered by creation.
_OCCURRENCES_KEPT = 8
# Steps of the observed execution read: past them a long run repeats what it did.
STEPS_READ = 20_000
_DIGITS = re.compile(r"\d+")


_NO_LOCKS: frozenset[str] = frozenset()
_LOCK_KINDS = frozenset({"lock.acquire", "lock.release"})


def _take_or_give(locks: dict[str, int], operation: Operation) -> None:
    """Follow the locks one agent holds through its acquire or release step."""
    for name, access in operation.objects:
        if operation.kind == "lock.acquire" and access is Access.SYNC:
            locks[name] = locks.get(name, 0) + 1
        elif operation.kind == "lock.release" and access is Access.RELEASE and name in locks:
            locks[name] -= 1
            if not locks[name]:
                del locks[name]


def role_of(agent_name: str) -> str:
    """What agents running the same code share: their name without its numbers."""
    return _DIGITS.sub("#", agent_name)


def site_of(role: str, operation: Operation) -> Site:
    return (role, operation.kind, operation.detail)


@dataclass(frozen=True)
class RacingPair:
    """Run the ``second`` site right after the ``first`` (``rank``: 0 tried first)."""

    first: Site
    second: Site
    rank: int

    def as_json(self) -> dict:
        return {"first": list(self.first), "second": list(self.second), "rank": self.rank}

    @staticmethod
    def from_json(saved: dict) -> RacingPair:
        first, second = saved["first"], saved["second"]
        return RacingPair((str(first[0]), str(first[1]), str(first[2])), (str(second[0]), str(second[1]), str(second[2])), int(saved["rank"]))


def _rank(first: Site, first_access: Access, second: Site, second_access: Access, written_back: bool) -> int | None:
    """How promising running ``second`` right after ``first`` is; ``None``: never a race.

    ``written_back``: the agent of ``first`` read the object there holding no
    lock and wrote it back at the same line (an unlocked read-modify-write).
    """
    accesses = (first_access, second_access)
    if accesses == (Access.READ, Access.READ):
        return None
    same_role = first[0] == second[0]
    if accesses == (Access.RELEASE, Access.SYNC):
        return 3 if same_role else 1
    if accesses == (Access.READ, Access.WRITE) and written_back and not same_role:
        return 0
    if Access.READ in accesses:
        return 3 if same_role else 2
    if accesses == (Access.WRITE, Access.WRITE):
        return 3
    return 4


def racing_pairs(
    history: Sequence[tuple[int, Operation]], agent_names: Sequence[str], created_at: Sequence[int]
) -> list[RacingPair]:
    """Every ordered pair of conflicting sites of one execution, the most promising first.

    Within a rank, pairs keep the order in which the execution first showed
    them.
    """
    roles = [role_of(name) for name in agent_names]
    steps = history[:STEPS_READ]
    # object -> (site, access) -> the first few (step, agent, locks held) that touched it so.
    touched: dict[str, dict[tuple[Site, Access], list[tuple[int, int, frozenset[str]]]]] = {}
    held: dict[int, dict[str, int]] = {}  # agent -> lock -> times taken (an RLock's count)
    # (agent, object) -> the site of the agent's last access to it, when that was a read holding no lock.
    last_read: dict[tuple[int, str], Site] = {}
    # object -> the sites whose unlocked read of it their agent wrote back at the same line (``x += 1``).
    written_back: dict[str, set[Site]] = {}
    for index, (agent, operation) in enumerate(steps):
        if not operation.objects:
            continue
        site = site_of(roles[agent] if agent < len(roles) else "?", operation)
        locks = held.get(agent)
        lockset = frozenset(locks) if locks else _NO_LOCKS
        for name, access in operation.objects:
            if name == CLOCK:
                continue
            seen = touched.setdefault(name, {}).setdefault((site, access), [])
            if len(seen) < _OCCURRENCES_KEPT:
                seen.append((index, agent, lockset))
            read_at = last_read.pop((agent, name), None)
            if access is Access.READ and not lockset:
                last_read[(agent, name)] = site
            elif access is Access.WRITE and read_at is not None and read_at[2] == site[2]:
                written_back.setdefault(name, set()).add(read_at)
        if operation.kind in _LOCK_KINDS:
            _take_or_give(held.setdefault(agent, {}), operation)
    # created_at counts steps from 1: agent N was created by the step at index created_at[N] - 1.
    creator = [steps[step - 1][0] if 0 < step <= len(steps) else None for step in created_at]

    def created_after(parent: int, step: int, child: int) -> bool:
        return child < len(created_at) and creator[child] == parent and created_at[child] - 1 > step

    def concurrency(ones: list[tuple[int, int, frozenset[str]]], others: list[tuple[int, int, frozenset[str]]]) -> str | None:
        """Whether two of the accesses could be adjacent ("unguarded"), could meet only under one lock ("guarded"), or neither (None)."""
        relation = None
        for step, agent, locks in ones:
            for other_step, other, other_locks in others:
                if agent == other or created_after(agent, step, other) or created_after(other, other_step, agent):
                    continue
                if not locks & other_locks:
                    return "unguarded"
                relation = "guarded"
        return relation

    found: dict[tuple[Site, Site], tuple[int, int]] = {}  # pair -> (rank, first step showing it)
    for name, entries in touched.items():
        listed = list(entries.items())
        rewritten = written_back.get(name, set())
        for (first, first_access), ones in listed:
            for (second, second_access), others in listed:
                rank = _rank(first, first_access, second, second_access, first in rewritten)
                if rank is None:
                    continue
                relation = concurrency(ones, others)
                if relation is None:
                    continue
                if relation == "guarded" and first[1] not in _LOCK_KINDS:
                    rank = max(rank, 3)
                shown = min(ones[0][0], others[0][0])
                known = found.get((first, second))
                if known is None or (rank, shown) < known:
                    found[(first, second)] = (rank, shown)
    ordered = sorted(found.items(), key=lambda item: item[1])
    return [RacingPair(first, second, rank) for (first, second), (rank, _) in ordered]
