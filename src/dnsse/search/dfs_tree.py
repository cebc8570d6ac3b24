"""The dfs search tree: the nodes of the current path, and which branch of a node comes next.

A scheduling choice (``AgentNode``) keeps what source-DPOR needs of it: the
runnable agents and what each would do, the agents asleep on entry, those
explored and those a race asked for (the backtrack set). A value choice
(``ValueNode``) keeps its options and the one taken. Workers of a divided
search (:mod:`dnsse.search.dfs_share`) decide branches with the same two
functions as one process does.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from dnsse.engine.operation import Operation


@dataclass
class AgentNode:
    """A scheduling choice on the current path."""

    step: int
    runnable: tuple[int, ...]
    operations: dict[int, Operation]
    current: int | None
    preemptions: int  # preemptions on the path before this choice
    # Agents asleep on entry: the step each would take, and how many objects
    # were named when that step was seen (names past that may differ here).
    sleep: dict[int, tuple[Operation, int]]
    known: int  # objects named before this choice
    chosen: int
    done: list[int] = field(default_factory=list)  # explored here, in order
    backtrack: set[int] = field(default_factory=set)

    def preempts(self, agent: int) -> bool:
        # ``current`` is set only when that agent could go on (not when its wait may expire).
        return self.current is not None and self.current in self.runnable and agent != self.current


@dataclass
class ValueNode:
    """A value choice (message match, timeout, fault) on the current path."""

    kind: str
    options: int
    chosen: int


DfsNode = AgentNode | ValueNode


def copy_node(node: DfsNode) -> DfsNode:
    """A node that shares no mutable part with ``node``."""
    if isinstance(node, ValueNode):
        return replace(node)
    return replace(
        node, operations=dict(node.operations), sleep=dict(node.sleep), done=list(node.done), backtrack=set(node.backtrack)
    )


def alternative(node: DfsNode, bound: int | None) -> int | None:
    """The next unexplored choice at ``node`` (the lowest agent or the next value), or ``None``."""
    if isinstance(node, ValueNode):
        return node.chosen + 1 if node.chosen + 1 < node.options else None
    if bound is None:
        candidates = node.backtrack - set(node.done) - set(node.sleep)
    else:
        candidates = {
            agent
            for agent in node.runnable
            if agent not in node.done and node.preemptions + node.preempts(agent) <= bound
        }
    return min(candidates) if candidates else None


def add_backtrack(node: AgentNode, initials: frozenset[int], agent: int) -> bool:
    """Schedule a reversal of a race at ``node`` (source sets); whether the backtrack set grew."""
    if initials & node.backtrack:
        return False  # a reversal already starts here
    startable = initials & set(node.runnable)
    if agent in startable:
        node.backtrack.add(agent)
    elif startable:
        node.backtrack.add(min(startable))
    else:
        node.backtrack.update(node.runnable)
    return True
