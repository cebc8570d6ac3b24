"""Dependency and happens-before between the steps of one execution.

Two steps are **dependent** when swapping them could change what happens:
they belong to one agent (program order), or they touch one object and not
both only read it. Every operation names the objects it touches; on top of
those, each step of agent ``N`` implicitly writes ``agent#N``, the agent
itself, so an operation of another agent that observes agent ``N`` (a join
that asks whether it finished) names ``agent#N`` and depends on its steps.

**Happens-before** is the transitive closure of dependency in execution order,
plus creation: an agent's first step happens after the step that created it.
Two executions are equivalent (one Mazurkiewicz class) when they have the
same steps per agent and order every dependent pair alike; a program's
outcome is the same on all of them, which is what lets DPOR run one per class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from dnsse.engine.object_names import fresh_in, number_of
from dnsse.engine.operation import Access, Operation

Step = tuple[int, Operation]
_READ = Access.READ
# agent -> agent_object(agent), made once: dependent() asks at every step of a pos execution.
_AGENT_NAMES: dict[int, str] = {}


def agent_object(agent: int) -> str:
    """The name that stands for agent ``agent`` itself (its progress, its lifetime)."""
    name = _AGENT_NAMES.get(agent)
    if name is None:
        name = _AGENT_NAMES[agent] = f"agent#{agent}"
    return name


def touches(agent: int, operation: Operation) -> tuple[tuple[str, Access], ...]:
    """What a step of ``agent`` performing ``operation`` touches, and how."""
    return operation.objects + ((agent_object(agent), Access.WRITE),)


def dependent(agent: int, operation: Operation, other_agent: int, other: Operation) -> bool:
    """Whether swapping the two steps could change the outcome.

    What ``touches`` says, without building it (pos asks at every step): the
    pairs of named objects, then each step's implicit write of its own
    agent, which the other's operation may name (any access of a written
    object is dependent). The two agents' own names never meet: they differ.
    """
    if agent == other_agent:
        return True
    theirs = other.objects
    for name, access in operation.objects:
        for other_name, other_access in theirs:
            if name == other_name and (access is not _READ or other_access is not _READ):
                return True
    if theirs:
        mine = _AGENT_NAMES.get(agent) or agent_object(agent)
        for other_name, _ in theirs:
            if other_name == mine:
                return True
    if operation.objects:
        its = _AGENT_NAMES.get(other_agent) or agent_object(other_agent)
        for name, _ in operation.objects:
            if name == its:
                return True
    return False


def dependent_across(agent: int, operation: Operation, known: int, other_agent: int, other: Operation) -> bool:
    """``dependent`` for a step seen in another execution that shared this one's first steps.

    Objects are named by order of first use, so only the first ``known``
    names mean the same objects in both executions; any later name of one
    may be any later name of the other (``dnsse.engine.object_names``).
    """
    if agent == other_agent:
        return True
    mine = [(_blur(name, known), access) for name, access in touches(agent, operation)]
    theirs = [(_blur(name, known), access) for name, access in touches(other_agent, other)]
    for name, access in mine:
        for other_name, other_access in theirs:
            if name == other_name and not (access is Access.READ and other_access is Access.READ):
                return True
    return False


# Messages are named ``p2p:SRC->DST:TAG#N`` (dnsse.frameworks.torch_dist.p2p): a receive writes the
# one it takes and reads the next message of every other channel it could have taken from.
MESSAGE_PREFIX = "p2p:"


def offers_only(receiver: int, receive: Operation, agent: int, operation: Operation) -> str | None:
    """The message ``receive`` took, when ``operation`` touches it only by posting others it could take.

    Posting a message on a channel that a receive read (to see whether it
    could take from it) adds a choice to that receive; it changes nothing
    about taking the message it took. ``None`` when the two steps are
    dependent in any other way, or ``receive`` took no message.
    """
    if receiver == agent:
        return None
    taken = [name for name, access in receive.objects if access is not _READ and name.startswith(MESSAGE_PREFIX)]
    if len(taken) != 1:
        return None
    mine = touches(receiver, receive)
    for other_name, other_access in touches(agent, operation):
        for name, access in mine:
            if name != other_name or (access is _READ and other_access is _READ):
                continue
            if access is not _READ or not name.startswith(MESSAGE_PREFIX) or name == taken[0]:
                return None
    return taken[0]


def only_offers(poster: int, post: Operation, receiver: int, receive: Operation) -> bool:
    """Whether ``receive`` depends on ``post`` only by seeing the messages it posted, and took none.

    Such a receive had one more message to choose from for the post going
    first; it took another, which it could take as well had the post come
    after it. Reversing the two shows nothing new.
    """
    if poster == receiver:
        return False
    theirs = touches(receiver, receive)
    found = False
    for name, access in touches(poster, post):
        for other_name, other_access in theirs:
            if name != other_name or (access is _READ and other_access is _READ):
                continue
            if access is _READ or other_access is not _READ or not name.startswith(MESSAGE_PREFIX):
                return False
            if any(n == name and a is not _READ for n, a in theirs):
                return False  # it took this message
            found = True
    return found


def _blur(name: str, known: int) -> str:
    if not fresh_in(name, known):
        return name
    _, dot, attribute = name.partition(".")
    return "o*" + dot + attribute


@dataclass
class HappensBefore:
    """Vector clocks of the steps of one execution.

    ``clocks[i][a]`` counts the steps of agent ``a`` that happen before step
    ``i`` or are step ``i``; ``ordinal[i]`` is step ``i``'s position (from 1)
    among its agent's steps. Step ``i`` happens before step ``j`` exactly when
    ``ordinal[i] <= clocks[j][agent of i]``.
    """

    steps: Sequence[Step]
    clocks: list[list[int]]
    ordinal: list[int]
    agents: int

    def before(self, i: int, j: int) -> bool:
        return self.ordinal[i] <= self.clocks[j][self.steps[i][0]]


def happens_before(steps: Sequence[Step], created_at: Sequence[int]) -> HappensBefore:
    """The happens-before order of ``steps`` (agent ids index ``created_at``)."""
    agents = max([len(created_at)] + [agent + 1 for agent, _ in steps])
    zero = [0] * agents
    last_of_agent: dict[int, list[int]] = {}
    # Per object: the clock of its last non-read access, and the join of the
    # reads since then; a read depends on the first, anything else on both.
    last_write: dict[str, list[int]] = {}
    reads_since: dict[str, list[int]] = {}
    clocks: list[list[int]] = []
    ordinal: list[int] = []
    for agent, operation in steps:
        clock = last_of_agent.get(agent)
        if clock is None:
            creator = created_at[agent] - 1 if agent < len(created_at) else -1
            clock = list(clocks[creator]) if 0 <= creator < len(clocks) else list(zero)
        else:
            clock = list(clock)
        objects = touches(agent, operation)
        for name, access in objects:
            _join(clock, last_write.get(name))
            if access is not Access.READ:
                _join(clock, reads_since.get(name))
        clock[agent] += 1
        for name, access in objects:
            if access is Access.READ:
                _join(reads_since.setdefault(name, list(zero)), clock)
            else:
                last_write[name] = clock
                reads_since.pop(name, None)
        last_of_agent[agent] = clock
        clocks.append(clock)
        ordinal.append(clock[agent])
    return HappensBefore(steps, clocks, ordinal, agents)


def _join(into: list[int], other: list[int] | None) -> None:
    if other is None:
        return
    for index, value in enumerate(other):
        if value > into[index]:
            into[index] = value


def canonical_order(steps: Sequence[Step], created_at: Sequence[int]) -> tuple[tuple[int, tuple], ...]:
    """One representative of the Mazurkiewicz class of ``steps``, as what each step touched.

    Repeatedly takes, among the steps whose happens-before predecessors are
    all taken, the one of the lowest agent id. A step is known by its agent and
    the objects it touched, not by where it was announced (a receive that
    matched at once and one that matched after a wait touch the same), and
    steps that touch nothing shared are left out: they commute with every
    step of other agents. Objects named by order of first use are renamed by
    order of appearance here, so equivalent executions give equal results.
    """
    order = happens_before(steps, created_at)
    per_agent: dict[int, list[int]] = {}
    for index, (agent, _) in enumerate(steps):
        per_agent.setdefault(agent, []).append(index)
    taken = [0] * order.agents
    renamed: dict[int, int] = {}
    result = []
    for _ in range(len(steps)):
        for agent in sorted(per_agent):
            queue = per_agent[agent]
            if taken[agent] >= len(queue):
                continue
            index = queue[taken[agent]]
            needs = order.clocks[index]
            if all(needs[a] <= taken[a] + (1 if a == agent else 0) for a in range(order.agents)):
                taken[agent] += 1
                objects = steps[index][1].objects
                if objects:
                    result.append((agent, tuple(sorted((_rename(name, renamed), a.value) for name, a in objects))))
                break
    return tuple(result)


def _rename(name: str, renamed: dict[int, int]) -> str:
    number = number_of(name)
    if number is None:
        return name
    new = renamed.setdefault(number, len(renamed) + 1)
    _, dot, attribute = name.partition(".")
    return f"o{new}{dot}{attribute}"
