"""The tree of schedules an iteratively bounded search has run, and the walk that finds the next one.

Each node is a choice the program asked for: which runnable agent goes next
(with a cost per option: preemptions or delays, :mod:`dnsse.search.bounded`)
or a value (a message match, a fault, an input; all options cost nothing).
A child is the subtree below one option, :data:`END` where the run ended
there, absent while no run took that option.

The tree is kept from one bound to the next, so a bound never runs a schedule
again: the walk at bound ``c`` goes down every option whose cost, added up
from the root, is at most ``c``, and hands out the path to each option no run
took yet. Every option within ``c - 1`` was taken at the bound before, so
the schedules run at bound ``c`` are exactly those that cost ``c``, as
iterative preemption bounding runs them (Musuvathi and Qadeer, PLDI 2007;
Thomson, Donaldson and Betts, PPoPP 2014). The walk keeps an explicit stack,
not recursion: a path is as deep as the run is long.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The child of an option whose run ended right after it.
END = object()


@dataclass
class Node:
    """One choice: ``options`` (agent ids, or value indices) and what each costs."""

    agent_choice: bool
    # For an agent choice the runnable agents; for a value choice the kind and 0..n-1.
    kind: str
    options: tuple[int, ...]
    costs: tuple[int, ...]
    children: dict[int, object] = field(default_factory=dict)  # option index -> Node or END


@dataclass
class _Frame:
    node: Node
    cost: int  # the cost of the path down to this node
    next: int = 0  # the next option index to look at


class BoundedWalk:
    """Depth first over the tree, within ``bound``: the paths no run took yet, one at a time."""

    def __init__(self, root: Node | None, bound: int) -> None:
        self.bound = bound
        self._stack: list[_Frame] = [_Frame(root, 0)] if root is not None else []
        # The option index taken at each frame but the last (the path down to the top frame).
        self._path: list[int] = []
        # Whether some option was left out for costing more than the bound: a larger bound has more to run.
        self.cut = False

    def next_path(self) -> list[int] | None:
        """The option indices of the next path to run (its last option not taken yet); ``None`` when none is left.

        Call it again only once that path has been run (its subtree is then in the tree).
        """
        stack, path = self._stack, self._path
        while stack:
            frame = stack[-1]
            node = frame.node
            if frame.next >= len(node.options):
                stack.pop()
                if path:
                    path.pop()
                continue
            index = frame.next
            cost = frame.cost + node.costs[index]
            if cost > self.bound:
                frame.next += 1
                self.cut = True
                continue
            child = node.children.get(index)
            if child is None:
                # Run it; the next call finds its subtree here and goes down into it.
                return [*path, index]
            frame.next += 1
            if child is END:
                continue
            path.append(index)
            stack.append(_Frame(child, cost))  # type: ignore[arg-type]
        return None
