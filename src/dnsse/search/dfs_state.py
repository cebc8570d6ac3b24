"""The dfs search tree as JSON, so that ``--resume`` goes on with the branches left to explore.

The tree is the current path: for each scheduling choice the runnable
agents, the operation each would perform, the sleep set on entry, the agents
explored and those still to explore (the backtrack set); for each value
choice its options and the one taken. With the pass the search is in
(:mod:`dnsse.search.dfs_first_pass`; a resumed second pass runs again the
first pass's executions it reaches), the counts (executions, runs cut
short by sleep sets, divergences) and the first reason a footprint may be
incomplete, a resumed search runs the executions the uninterrupted one would
have run, and its ``verified`` statement counts all of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dnsse.engine.operation import Access, Operation
from dnsse.search.dfs_tree import AgentNode, DfsNode, ValueNode

if TYPE_CHECKING:
    from dnsse.search.dfs import DfsStrategy


def operation_json(operation: Operation) -> list:
    return [operation.kind, [[name, access.value] for name, access in operation.objects], operation.detail]


def operation_from(raw: list) -> Operation:
    kind, objects, detail = raw
    return Operation(str(kind), tuple((str(name), Access(access)) for name, access in objects), str(detail))


def dfs_state(search: DfsStrategy) -> dict:
    return {
        "bound": search.bound,
        "path": [_node_json(node) for node in search.path],
        "replay": search.replay,
        "exhausted": search.exhausted,
        "executions": search.executions,
        "redundant": search.redundant,
        "divergences": search.divergences,
        "untrusted": search.untrusted,
        "inputs_kept": search.inputs_kept,
        "first_pass": search.first_pass,
        "put_off": search.put_off,
    }


def restore_dfs(search: DfsStrategy, state: dict) -> None:
    if state["bound"] != search.bound:
        raise ValueError(f"it was saved by a dfs search with preemption bound {state['bound']}, not {search.bound}")
    search.path = [_node_from(raw) for raw in state["path"]]
    search.replay = int(state["replay"])
    search.exhausted = bool(state["exhausted"])
    search.executions = int(state["executions"])
    search.redundant = int(state["redundant"])
    search.divergences = int(state["divergences"])
    search.untrusted = None if state["untrusted"] is None else str(state["untrusted"])
    search.inputs_kept = int(state.get("inputs_kept", 0))
    # A state saved before the first pass existed was saved by a search of one pass.
    search.first_pass = bool(state.get("first_pass", False))
    search.put_off = int(state.get("put_off", 0))


def _node_json(node: DfsNode) -> dict:
    if not isinstance(node, AgentNode):
        return {"kind": node.kind, "options": node.options, "chosen": node.chosen}
    return {
        "step": node.step,
        "runnable": list(node.runnable),
        "operations": [[agent, operation_json(op)] for agent, op in node.operations.items()],
        "current": node.current,
        "preemptions": node.preemptions,
        "sleep": [[agent, operation_json(op), known] for agent, (op, known) in node.sleep.items()],
        "known": node.known,
        "chosen": node.chosen,
        "done": list(node.done),
        "backtrack": sorted(node.backtrack),
    }


def _node_from(raw: dict) -> DfsNode:
    if "kind" in raw:
        return ValueNode(str(raw["kind"]), int(raw["options"]), int(raw["chosen"]))
    return AgentNode(
        step=int(raw["step"]),
        runnable=tuple(int(agent) for agent in raw["runnable"]),
        operations={int(agent): operation_from(op) for agent, op in raw["operations"]},
        current=None if raw["current"] is None else int(raw["current"]),
        preemptions=int(raw["preemptions"]),
        sleep={int(agent): (operation_from(op), int(known)) for agent, op, known in raw["sleep"]},
        known=int(raw["known"]),
        chosen=int(raw["chosen"]),
        done=[int(agent) for agent in raw["done"]],
        backtrack={int(agent) for agent in raw["backtrack"]},
    )
