"""One worker's part of a divided ``dfs``: a slice of the subtree below a given prefix.

A search divided among workers (:mod:`dnsse.search.dfs_share`) hands a
worker a **unit**: the path from the root to one unexplored branch, as JSON.
The worker runs :class:`~dnsse.search.dfs.DfsStrategy` below that prefix
(its ``floor``) for at most a given number of executions and answers with a
**slice**: what it learnt about the prefix (the footprint the prefix's last
step showed as it ran, races whose reversal starts inside the prefix) and,
unless it exhausted the subtree, its **frontier** (every node of its path
below the prefix, with what is explored and what is left), which the
coordinator takes over and hands out again. Everything crosses process and
machine boundaries as JSON, as traces do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from dnsse.engine.operation import Access, Operation
from dnsse.engine.runner import ExecutionResult
from dnsse.search.dfs import DfsStrategy
from dnsse.search.dfs_tree import AgentNode, DfsNode, ValueNode


@dataclass
class Slice:
    """What one worker did with one unit (see the module docstring)."""

    executions: int
    exhausted: bool
    # The prefix's last step as it ran (None for the root unit, or before any execution).
    footprint: dict | None
    # (depth in the prefix, initials, agent): races to reverse at a node of the prefix.
    escaped: list[tuple[int, list[int], int]]
    # The path below the prefix; its last node's choice was chosen but not run yet.
    frontier: list[dict]
    redundant: int = 0
    divergences: int = 0
    untrusted: str | None = None
    inputs_kept: int = 0

    def to_json(self) -> dict:
        return {
            "executions": self.executions,
            "exhausted": self.exhausted,
            "footprint": self.footprint,
            "escaped": [[depth, list(initials), agent] for depth, initials, agent in self.escaped],
            "frontier": self.frontier,
            "redundant": self.redundant,
            "divergences": self.divergences,
            "untrusted": self.untrusted,
            "inputs_kept": self.inputs_kept,
        }

    @staticmethod
    def from_json(data: dict) -> Slice:
        return Slice(
            executions=data["executions"],
            exhausted=data["exhausted"],
            footprint=data["footprint"],
            escaped=[(depth, list(initials), agent) for depth, initials, agent in data["escaped"]],
            frontier=data["frontier"],
            redundant=data["redundant"],
            divergences=data["divergences"],
            untrusted=data["untrusted"],
            inputs_kept=data.get("inputs_kept", 0),
        )


@dataclass
class SliceLimits:
    """When a worker ends its slice: after ``executions``, or once ``should_yield()`` says so."""

    executions: int
    should_yield: Callable[[], bool] = field(default=lambda: False)


def run_slice(
    bound: int | None,
    prefix: list[dict],
    limits: SliceLimits,
    execute: Callable[[DfsStrategy, int], ExecutionResult],
    on_first: Callable[[dict | None], None] = lambda footprint: None,
) -> Slice:
    """Explore below ``prefix`` (JSON nodes) with ``execute(strategy, n)`` running execution ``n``.

    ``on_first`` gets the prefix's footprint as soon as the first execution
    showed it, so that the coordinator can hand out siblings without waiting
    for the whole slice.
    """
    search = DfsStrategy(bound)
    search.path = [node_from_json(node) for node in prefix]
    search.floor = search.replay = len(search.path)
    footprint = None
    ran = 0
    while ran < limits.executions and not search.exhausted:
        result = execute(search, ran)
        search.observe(result)
        ran += 1
        if ran == 1 and search.floor > 0:
            footprint = _footprint(search.path[search.floor - 1])
            on_first(footprint)
        if limits.should_yield():
            break
    return Slice(
        executions=ran,
        exhausted=search.exhausted,
        footprint=footprint,
        escaped=[(depth, sorted(initials), agent) for depth, initials, agent in search.escaped],
        frontier=[] if search.exhausted else [node_to_json(node) for node in search.path[search.floor :]],
        redundant=search.redundant,
        divergences=search.divergences,
        untrusted=search.untrusted,
        inputs_kept=search.inputs_kept,
    )


def _footprint(node: DfsNode) -> dict | None:
    if isinstance(node, AgentNode):
        return operation_to_json(node.operations[node.chosen])
    return None


def operation_to_json(operation: Operation) -> dict:
    return {
        "kind": operation.kind,
        "objects": [[name, access.value] for name, access in operation.objects],
        "detail": operation.detail,
    }


def operation_from_json(data: dict) -> Operation:
    return Operation(data["kind"], tuple((name, Access(access)) for name, access in data["objects"]), data["detail"])


def node_to_json(node: DfsNode) -> dict:
    if isinstance(node, ValueNode):
        return {"value": node.kind, "options": node.options, "chosen": node.chosen}
    return {
        "step": node.step,
        "runnable": list(node.runnable),
        "operations": [[agent, operation_to_json(operation)] for agent, operation in node.operations.items()],
        "current": node.current,
        "preemptions": node.preemptions,
        "sleep": [[agent, operation_to_json(operation), known] for agent, (operation, known) in node.sleep.items()],
        "known": node.known,
        "chosen": node.chosen,
        "done": list(node.done),
        "backtrack": sorted(node.backtrack),
    }


def node_from_json(data: dict) -> DfsNode:
    if "value" in data:
        return ValueNode(data["value"], data["options"], data["chosen"])
    return AgentNode(
        step=data["step"],
        runnable=tuple(data["runnable"]),
        operations={agent: operation_from_json(operation) for agent, operation in data["operations"]},
        current=data["current"],
        preemptions=data["preemptions"],
        sleep={agent: (operation_from_json(operation), known) for agent, operation, known in data["sleep"]},
        known=data["known"],
        chosen=data["chosen"],
        done=list(data["done"]),
        backtrack=set(data["backtrack"]),
    )
