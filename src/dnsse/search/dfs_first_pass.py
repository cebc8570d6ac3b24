"""The first pass of ``dfs``: every race reversed except the order of critical sections.

Critical sections of one lock that touch the same data (counters
incremented under a lock, SCTBench's wronglock) are dependent, so each of
their orders is a class of its own: seven threads that increment under one
lock make 7! classes, and a depth-first search spends them all before it
reverses any race nearer the root, where a thread that skipped the lock
races with them. ``dfs`` therefore searches twice:

1. **First pass.** A race between two acquisitions of one lock is counted,
   not reversed: critical sections keep the order they first ran in, and
   every other race (accesses that no common lock orders, messages, waits
   that expire) is reversed as usual. Bugs that need no other order of
   critical sections are found here, in a handful of executions.
2. **Second pass.** The whole tree again, with every race reversed; its
   guarantee is the one ``verified`` states. It starts only when the first
   pass put off at least one race (otherwise the first pass was the whole
   search).

The second pass would run again every execution of the first pass that it
reaches with the same choices and the same sleep sets (the two passes
share the order in which they explore each node's branches, so most are
shared). Those are not run twice: the first pass keeps what each of its
executions showed (the nodes it added, its steps), up to ``KEPT_STEPS``
steps in all, and the second pass reads them back where it would have run
them. A search that runs to the end thus costs about what one pass over the
whole tree costs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from dnsse.engine.operation import Operation
from dnsse.search.dfs_tree import AgentNode, DfsNode

# Steps of first-pass executions kept for the second pass (beyond it, they are run again).
KEPT_STEPS = 200_000


@dataclass
class SeenRun:
    """What the second pass needs of one execution: the nodes it added and its steps."""

    added: list[DfsNode]
    history: Sequence[tuple[int, Operation]]
    pending: dict[int, Operation]
    created_at: Sequence[int]


def branch_key(path: Sequence[DfsNode], replay: int) -> tuple:
    """What decides an execution: at each replayed node, the choice and the siblings explored before it.

    The siblings before a choice are the agents that sleep on taking it, so
    two executions with equal keys make the same choices all along.
    """
    key = []
    for node in path[:replay]:
        if isinstance(node, AgentNode):
            key.append((node.chosen, tuple(node.done[: node.done.index(node.chosen)])))
        else:
            key.append((node.kind, node.chosen))
    return tuple(key)


class FirstPassRuns:
    """The executions of the first pass, by ``branch_key``, while they fit in ``KEPT_STEPS``."""

    def __init__(self) -> None:
        self.runs: dict[tuple, SeenRun] = {}
        self.steps = 0

    def keep(self, key: tuple, run: SeenRun) -> None:
        steps = len(run.history)
        if self.steps + steps > KEPT_STEPS:
            return
        self.steps += steps
        self.runs[key] = run

    def take(self, key: tuple) -> SeenRun | None:
        run = self.runs.pop(key, None)
        if run is not None:
            self.steps -= len(run.history)
        return run

    def clear(self) -> None:
        self.runs.clear()
        self.steps = 0
