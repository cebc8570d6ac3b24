"""The shared part of a divided ``dfs`` (:class:`~dnsse.search.dfs_share.DfsShare`) as JSON, for ``--resume``.

A divided search stopped by Ctrl-C first takes every worker's slice back
(each ends its slice after its running execution), so what is saved is the
whole search: the shared nodes with what each explored, the units given
back, the counts. A unit still out when the state was saved (a campaign
killed, not stopped, resumes from its last periodic save) is saved as given
back: it is explored again whole, and its executions counted again.
"""

from __future__ import annotations

from dnsse.search.dfs_share import DfsShare, Unit, SharedNode
from dnsse.search.dfs_slice import node_from_json, node_to_json

def share_state(share: DfsShare) -> dict:
    return {
        "bound": share.bound,
        "nodes": [
            [node_to_json(shared.node), shared.parent, shared.branch, shared.depth, sorted(shared.ran)]
            for shared in share.nodes
        ],
        "open": sorted(share.open),
        "again": [_unit_state(unit) for unit in [*share.again, *share.flying.values()]],
        "lost": share.lost,
        "lost_branches": sorted([list(branch) for branch in share._lost_branches]),
        "units": share.units,
        "root_given": share._root_given,
        "executions": share.executions,
        "redundant": share.redundant,
        "divergences": share.divergences,
        "untrusted": share.untrusted,
    }


def restore_share(share: DfsShare, state: dict) -> None:
    """Put ``state`` back into a fresh ``share``; ValueError, TypeError or KeyError when it is damaged."""
    bound = state["bound"]
    if bound != share.bound:
        raise ValueError(f"it was saved with the preemption bound {bound!r}, not {share.bound!r}")
    share.nodes = [
        SharedNode(node_from_json(node), _optional_int(parent), _optional_int(branch), int(depth), {int(a) for a in ran})
        for node, parent, branch, depth, ran in state["nodes"]
    ]
    share.open = {int(index) for index in state["open"]}
    if any(not 0 <= index < len(share.nodes) for index in share.open):
        raise ValueError("an open node is not among the nodes")
    share.again = [_unit(raw) for raw in state["again"]]
    share.lost = int(state["lost"])
    share._lost_branches = {(int(node), int(agent)) for node, agent in state["lost_branches"]}
    share.units = int(state["units"])
    share._root_given = bool(state["root_given"])
    share.executions = int(state["executions"])
    share.redundant = int(state["redundant"])
    share.divergences = int(state["divergences"])
    untrusted = state["untrusted"]
    share.untrusted = None if untrusted is None else str(untrusted)


def _unit_state(unit: Unit) -> dict:
    return {"number": unit.number, "chain": unit.chain, "choice": unit.choice, "prefix": unit.prefix}


def _unit(raw: dict) -> Unit:
    return Unit(int(raw["number"]), [int(index) for index in raw["chain"]], _optional_int(raw["choice"]), list(raw["prefix"]))


def _optional_int(value: object) -> int | None:
    return None if value is None else int(value)  # type: ignore[arg-type]
