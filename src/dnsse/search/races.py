"""The races of one execution that another order could reverse (source-DPOR).

Two steps of different agents **race** when they are dependent, the earlier
happens before the later only through their own dependency, and the later
agent could have taken its step in the earlier one's place. Reversing each
race once, from the state before its earlier step, is what lets DPOR reach
every class of executions (Abdulla, Aronis, Jonsson, Sagonas: "Source Sets",
JACM 2017). Three refinements keep the number of executions near one per class:

- **Only races that can be reversed.** When the later agent was blocked
  before the earlier step on that very operation (a lock held by the other
  agent, a message not yet sent) and no step that could go first touches what
  it waits for, no order puts it first there: such a pair is skipped. A lock's release and another agent's acquire are never both
  possible, so they order the steps (happens-before) but never race: the
  acquire races with the other agent's acquire. Blocked agents create no
  backtrack points.
- **Messages.** A receive that took a message does not race with the send
  that posted it (it cannot take it first), nor with a send it only saw
  posted and did not take: it could take what it took had that send come
  after it, and its other choices are its value choice.
- **Initials, not every agent.** The reversed order starts with some agent
  whose first step after the earlier one depends on nothing else in between;
  adding one of those (and none when one is already scheduled there) is
  enough (a *source set*).

Each race says whether it orders two critical sections of one lock (both
steps acquire it), which the first pass of ``dfs`` leaves for later.

Agents that had not finished when the execution ended count with the
operation they were stopped at, as a last step that did not happen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

from dnsse.engine.operation import Access, Operation, races_on_one_object
from dnsse.search.dependency import MESSAGE_PREFIX, HappensBefore, dependent, happens_before, only_offers, touches

LOCK_ACQUIRE = "lock.acquire"


@dataclass(frozen=True)
class Race:
    """Step ``earlier`` races with step ``later``; ``initials`` may start the reversed order."""

    earlier: int
    later: int
    agent: int  # the agent of the later step
    initials: frozenset[int]
    # Both steps take one lock: reversing the race reorders two critical sections.
    orders_critical_sections: bool = False


def reversible_races(
    steps: Sequence[tuple[int, Operation]],
    pending: dict[int, Operation],
    created_at: Sequence[int],
    runnable_before: Callable[[int], Sequence[int] | None],
) -> Iterator[Race]:
    """Every reversible race of an execution.

    ``pending`` maps each unfinished agent to the operation it was stopped at;
    ``created_at`` is the step during which each agent was created;
    ``runnable_before(i)`` is the agents that could run in the state before
    step ``i``, or ``None`` when only one could (nothing to reverse there).
    """
    executed = len(steps)
    # The stopped operations go last, as if they ran then: what they would
    # have depended on is what their clocks say.
    extended = list(steps) + sorted(pending.items())
    order = happens_before(extended, created_at)
    accesses: dict[str, list[tuple[int, Access]]] = {}
    last_of: dict[int, int] = {}
    for later, (agent, operation) in enumerate(extended):
        previous = last_of.get(agent)
        if previous is not None:
            seen = order.clocks[previous]
        else:
            creator = created_at[agent] - 1 if agent < len(created_at) else -1
            seen = order.clocks[creator] if 0 <= creator < executed else [0] * order.agents
        candidates = _dependent_before(agent, operation, seen, extended, accesses, order)
        taken = _messages_written(operation)
        reversible = {}
        for index, racing in candidates.items():
            if taken and taken & _messages_written(extended[index][1]):
                continue  # it took the message that step posted: it cannot take it before
            if only_offers(*extended[index], agent, operation):
                continue
            runnable = runnable_before(index)
            if runnable is None or (not racing and agent not in runnable):
                continue
            between = [k for k in range(index + 1, min(later, executed)) if not order.before(index, k)]
            if (previous is None or previous < index) and agent not in runnable:
                # Blocked on this very operation there: it can go first only
                # if a step that may happen first unblocks it.
                if not any(dependent(agent, operation, *extended[k]) for k in between if extended[k][0] != agent):
                    continue
            reversible[index] = between
        for index, between in reversible.items():
            if any(other != index and order.before(index, other) for other in reversible):
                continue  # not the last of a chain: reversing the last one covers it
            yield Race(
                index,
                later,
                agent,
                _initials(between, later, agent, extended, order),
                takes_one_lock(extended[index][1], operation),
            )
        if later < executed:
            for name, access in touches(agent, operation):
                accesses.setdefault(name, []).append((later, access))
            last_of[agent] = later


def _messages_written(operation: Operation) -> set[str]:
    """The messages a step posts or takes."""
    return {name for name, access in operation.objects if access is not Access.READ and name.startswith(MESSAGE_PREFIX)}


def takes_one_lock(operation: Operation, other: Operation) -> bool:
    """Whether both operations acquire one lock (and touch nothing else they share)."""
    if operation.kind != LOCK_ACQUIRE or other.kind != LOCK_ACQUIRE:
        return False
    mine = {name for name, access in operation.objects if access is Access.SYNC}
    return bool(mine & {name for name, access in other.objects if access is Access.SYNC})


def _dependent_before(
    agent: int,
    operation: Operation,
    seen: list[int],
    steps: Sequence[tuple[int, Operation]],
    accesses: dict[str, list[tuple[int, Access]]],
    order: HappensBefore,
) -> dict[int, bool]:
    """Earlier steps of other agents dependent with this one that it had not seen.

    Each maps to whether the two can race; a release and a take of one object
    cannot, unless the taker could act while the object was held (its timed
    wait could give up there).
    """
    found: dict[int, bool] = {}
    for name, access in touches(agent, operation):
        for index, other_access in accesses.get(name, ()):
            if access is Access.READ and other_access is Access.READ:
                continue
            other = steps[index][0]
            if other != agent and order.ordinal[index] > seen[other]:
                racing = races_on_one_object(access, other_access)
                found[index] = found.get(index, False) or racing
    return found


def _initials(
    between: list[int], later: int, agent: int, steps: Sequence[tuple[int, Operation]], order: HappensBefore
) -> frozenset[int]:
    """Agents whose first step in the reversed order (``between``, then ``later``) depends on none before it."""
    firsts: dict[int, int] = {}
    for k in between:
        firsts.setdefault(steps[k][0], k)
    firsts.setdefault(agent, later)
    initials = set()
    for who, first in firsts.items():
        if not any(order.before(k, first) for k in between if k < first):
            initials.add(who)
    return frozenset(initials)
