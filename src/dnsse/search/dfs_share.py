"""``dfs`` divided among workers: the coordinator's share of the search tree.

The tree of a ``dfs`` search is split into disjoint subtrees, each named by
the path to its root (a *unit*). A worker explores a unit below that path
(:mod:`dnsse.search.dfs_slice`) and, when it stops before the subtree is
done (its slice of executions is used up, or the coordinator asked it to
yield because another worker ran out of work), hands its frontier back: the
nodes of its path become *shared*, owned here, and every unexplored branch
of them can go to any worker. A branch is handed out once (it joins the
node's ``done`` list at that moment), so no subtree is explored twice.

Source-DPOR stays sound across workers because everything that decides a
branch lives with the node's one owner. A race found in one subtree whose
reversal starts at a shared node comes back as an *escaped* race and is
added here, with the same source-set rule as in one process; a new branch
it opens is handed out like any other. Sleep sets need the footprint each
explored sibling showed as it ran, so a sibling is handed out only once
every branch before it at that node has reported its first step's
footprint (a worker reports it right after its first execution). The search
is exhausted when no unit is in flight and no shared node has a branch
left; ``verified`` then holds as in one process, when no worker saw a
divergence or an untrusted footprint.

A worker process may die with its unit. Died outside any execution, it
is given back and handed out again whole. Died in an execution (the
program crashed its process), the unit is *lost*: running it again would
crash again at the same place, so the rest of its subtree stays
unexplored and the search is never exhausted (nothing is verified). Its
branch still counts as taken, so the siblings are handed out without its
footprint, and they do not let it sleep: a sleep set needs the footprint
the step showed as it ran, which the dead worker never sent.
"""

from __future__ import annotations

from dataclasses import dataclass

from dnsse.search.dfs import DfsStrategy
from dnsse.search.dfs_tree import AgentNode, DfsNode, add_backtrack, alternative
from dnsse.search.dfs_slice import Slice, node_from_json, operation_from_json, operation_to_json


@dataclass
class Unit:
    """The subtree below ``prefix`` (JSON nodes from the root), handed to one worker."""

    number: int
    # Shared node ids from the root to the prefix's last node, and the branch taken there.
    chain: list[int]
    choice: int | None
    prefix: list[dict]

    @property
    def depth(self) -> int:
        return len(self.prefix)


@dataclass
class SharedNode:
    node: DfsNode
    parent: int | None
    branch: int | None  # the parent's choice that leads here
    depth: int
    ran: set[int]  # agents of node.done whose footprint as it ran is known


class DfsShare:
    """The shared part of a divided ``dfs`` search; see the module docstring."""

    def __init__(self, bound: int | None) -> None:
        self.bound = bound
        self.nodes: list[SharedNode] = []
        self.open: set[int] = set()  # shared nodes that may have a branch left
        self.flying: dict[int, Unit] = {}
        self.again: list[Unit] = []  # units given back whole, handed out before any other
        self.lost = 0
        self._lost_branches: set[tuple[int, int]] = set()  # (shared node, agent) of lost units
        self.units = 0
        self._root_given = False
        self.executions = 0
        self.redundant = 0
        self.divergences = 0
        self.untrusted: str | None = None
        self.inputs_kept = 0

    def take(self, deepest: bool) -> Unit | None:
        """The next unit: from the deepest shared node (to carry on) or the shallowest (to steal a big subtree).

        ``None`` when nothing can be handed out now (all taken, or waiting for a footprint).
        """
        if self.again:
            unit = self.again.pop(0)
            self.flying[unit.number] = unit
            return unit
        if not self._root_given:
            self._root_given = True
            return self._give([], None, [])
        order = sorted(self.open, key=lambda i: (-self.nodes[i].depth if deepest else self.nodes[i].depth, i))
        for index in order:
            shared = self.nodes[index]
            choice = alternative(shared.node, self.bound)
            if choice is None:
                self.open.discard(index)
                continue
            if self.bound is None and isinstance(shared.node, AgentNode) and not set(shared.node.done) <= shared.ran:
                continue  # a sibling before it has not shown what its step touched yet
            if isinstance(shared.node, AgentNode):
                shared.node.done.append(choice)
            else:
                shared.node.chosen = choice
            chain = self._chain(index)
            return self._give(chain, choice, self._prefix(chain, choice))
        return None

    def footprint(self, unit: Unit, footprint: dict | None) -> None:
        """The prefix's last step of ``unit`` as it ran (sent after the unit's first execution)."""
        if footprint is None or not unit.chain:
            return
        node = self.nodes[unit.chain[-1]].node
        if isinstance(node, AgentNode) and unit.choice is not None:
            node.operations[unit.choice] = operation_from_json(footprint)
            self.nodes[unit.chain[-1]].ran.add(unit.choice)

    def give_back(self, unit: Unit) -> None:
        """``unit``'s worker died outside any execution: the unit is handed out again, whole."""
        self.flying.pop(unit.number, None)
        self.again.append(unit)

    def lose(self, unit: Unit) -> None:
        """``unit``'s worker died in an execution: the rest of its subtree stays unexplored (see above)."""
        self.flying.pop(unit.number, None)
        self.lost += 1
        if unit.chain and unit.choice is not None and isinstance(self.nodes[unit.chain[-1]].node, AgentNode):
            self.nodes[unit.chain[-1]].ran.add(unit.choice)
            self._lost_branches.add((unit.chain[-1], unit.choice))

    def absorb(self, unit: Unit, done: Slice) -> None:
        """A worker's slice of ``unit``: counts, escaped races, and its frontier, which becomes shared."""
        self.flying.pop(unit.number, None)
        self.executions += done.executions
        self.redundant += done.redundant
        self.divergences += done.divergences
        if self.untrusted is None:
            self.untrusted = done.untrusted
        self.inputs_kept = max(self.inputs_kept, done.inputs_kept)
        self.footprint(unit, done.footprint)
        for depth, initials, agent in done.escaped:
            index = unit.chain[depth]
            node = self.nodes[index].node
            if isinstance(node, AgentNode) and add_backtrack(node, frozenset(initials), agent):
                self.open.add(index)
        parent, branch = (unit.chain[-1], unit.choice) if unit.chain else (None, None)
        for offset, data in enumerate(done.frontier):
            node = node_from_json(data)
            if offset == len(done.frontier) - 1:
                # Its choice was made for the next execution, which did not run: not done.
                if isinstance(node, AgentNode):
                    node.done.pop()
                else:
                    node.chosen -= 1
            ran = set(node.done) if isinstance(node, AgentNode) else set()
            self.nodes.append(SharedNode(node, parent, branch, unit.depth + offset, ran))
            self.open.add(len(self.nodes) - 1)
            parent, branch = len(self.nodes) - 1, data["chosen"]

    def pending(self) -> bool:
        """Whether a unit was given back or some shared node has a branch left (now, or once a footprint arrives)."""
        return bool(self.again) or any(alternative(self.nodes[index].node, self.bound) is not None for index in self.open)

    def finished(self) -> bool:
        """Nothing in flight or lost, and no branch left anywhere: the whole tree was explored."""
        return self._root_given and not self.flying and not self.again and not self.lost and not self.pending()

    def summary(self) -> DfsStrategy:
        """The divided search as one ``dfs`` search would state it (``verified``, ``unverified``)."""
        search = DfsStrategy(self.bound)
        search.exhausted = self.finished()
        search.executions = self.executions
        search.redundant = self.redundant
        search.divergences = self.divergences
        search.untrusted = self.untrusted
        search.inputs_kept = self.inputs_kept
        return search

    def _give(self, chain: list[int], choice: int | None, prefix: list[dict]) -> Unit:
        self.units += 1
        unit = Unit(self.units, chain, choice, prefix)
        self.flying[unit.number] = unit
        return unit

    def _chain(self, index: int) -> list[int]:
        chain = []
        at: int | None = index
        while at is not None:
            chain.append(at)
            at = self.nodes[at].parent
        return chain[::-1]

    def _prefix(self, chain: list[int], choice: int) -> list[dict]:
        """The JSON path a worker replays: each node with the branch taken and the siblings before it."""
        branches = [self.nodes[index].branch for index in chain[1:]] + [choice]
        prefix = []
        for index, branch in zip(chain, branches):
            node = self.nodes[index].node
            if isinstance(node, AgentNode):
                done = [
                    agent
                    for agent in node.done[: node.done.index(branch) + 1]
                    if agent == branch or (index, agent) not in self._lost_branches
                ]
                prefix.append(
                    {
                        "step": node.step,
                        "runnable": list(node.runnable),
                        "operations": [[agent, operation_to_json(node.operations[agent])] for agent in done],
                        "current": node.current,
                        "preemptions": node.preemptions,
                        "sleep": [],  # a prefix is only replayed: its own sleep set is not needed
                        "known": node.known,
                        "chosen": branch,
                        "done": done,
                        "backtrack": sorted(node.backtrack),
                    }
                )
            else:
                prefix.append({"value": node.kind, "options": node.options, "chosen": branch})
        return prefix
