"""``ipb`` and ``idb``: iterative preemption bounding and iterative delay bounding.

The bounded searches of the SCTBench study (Thomson, Donaldson and Betts,
PPoPP 2014): run every schedule with bound 0, then every schedule with
bound 1 not run yet, then 2, and so on until the budget ends or a bound
leaves nothing out (the whole program was searched). Bugs that need few
preemptions or delays, which are most of them, come at small bounds.

- ``ipb`` counts **preemptions**: a switch away from an agent that could
  have gone on. Where the running agent blocks or ends, any agent may go
  next for free.
- ``idb`` counts **delays** of a deterministic round-robin scheduler
  (Emmi, Qadeer and Rakamarić, POPL 2011): the agent that ran goes on while
  it can, else the next agent by id after it, wrapping round; skipping over
  ``k`` runnable agents in that order costs ``k`` delays. Bound 0 is one
  schedule.

Every value choice (which message an any-source receive matches, faults,
the explored inputs' values) is enumerated at no cost; the seed of the
program's random generators is fixed to 0, as in ``dfs``. The search keeps
the tree of what it ran (:mod:`dnsse.search.bounded_tree`), so a schedule
is never run twice. There is no partial-order reduction inside a bound: two
equivalent schedules can differ in their number of preemptions, and pruning
one of them could drop the only one within the bound (``dfs`` with
``--preemption-bound`` runs without reduction for the same reason).

What the search covered is always said: ``notes()`` gives the largest bound
it finished (``bound_covered``, -1 before bound 0 is done) and the bound it
was in when the campaign stopped; an exhausted search (a bound that left
nothing out) is ``verified`` for every schedule.
"""

from __future__ import annotations

from typing import Sequence

from dnsse.engine.choices import ChoiceKind, TraceDivergence
from dnsse.engine.operation import Operation
from dnsse.engine.runner import ExecutionResult
from dnsse.search.bounded_tree import END, BoundedWalk, Node
from dnsse.search.dfs import MODEL_EXCLUDES
from dnsse.search.dfs_chooser import INPUT_COMBINATIONS, SEED
from dnsse.search.strategy import Division, Strategy

PREEMPTIONS = "preemptions"
DELAYS = "delays"


def preemption_costs(runnable: Sequence[int], going_on: int | None, last: int | None) -> tuple[int, ...]:
    """One preemption for any agent but the one that could go on; none when it cannot."""
    if going_on is None:
        return tuple(0 for _ in runnable)
    return tuple(0 if agent == going_on else 1 for agent in runnable)


def delay_costs(runnable: Sequence[int], going_on: int | None, last: int | None) -> tuple[int, ...]:
    """Round robin from the agent that could go on (else from the one after the agent that ran last):
    an agent costs as many delays as runnable agents come before it in that order."""
    if going_on is not None:
        start = going_on
    else:
        start = last + 1 if last is not None else 0
    span = max(runnable) + 1 if runnable else 1
    span = max(span, start + 1)
    order = sorted(runnable, key=lambda agent: (agent - start) % span)
    place = {agent: position for position, agent in enumerate(order)}
    return tuple(place[agent] for agent in runnable)


class BoundedChooser:
    """Follows the path the walk handed out, then takes the free choice at every new node."""

    wants_operations = True

    def __init__(self, search: IterativeBoundStrategy, path: list[int]) -> None:
        self.search = search
        self.path = path
        self.depth = 0  # choices made so far
        self.node: Node | None = None  # the node of the latest choice
        self.taken = -1  # the option taken there
        self.input_combinations = 1

    def next_value(self, kind: str, options: int) -> int:
        if kind == ChoiceKind.SEED:
            return SEED
        if kind == ChoiceKind.INPUT:
            if self.input_combinations * options > INPUT_COMBINATIONS:
                self.search.inputs_kept += 1
                return 0  # the default value: `unverified` says the search covered it only
            self.input_combinations *= options
        return self._choose(False, kind, tuple(range(options)), tuple(0 for _ in range(options)))

    def next_agent(self, runnable: Sequence[int], current: int | None, step: int) -> int:
        raise TypeError("BoundedChooser needs the history (wants_operations)")

    def next_agent_seeing(
        self,
        runnable: Sequence[int],
        current: int | None,
        step: int,
        operations: Sequence[Operation],
        history: Sequence[tuple[int, Operation]],
    ) -> int:
        last = history[-1][0] if history else None
        costs = self.search.cost(runnable, current, last)
        return self._choose(True, "agent", tuple(runnable), costs)

    def _choose(self, agent_choice: bool, kind: str, options: tuple[int, ...], costs: tuple[int, ...]) -> int:
        search = self.search
        if self.node is None:
            existing = search.root
        else:
            existing = self.node.children.get(self.taken)
        if existing is None or existing is END:
            node = Node(agent_choice, kind, options, costs)
            if self.node is None:
                search.root = node
            else:
                self.node.children[self.taken] = node
        else:
            node = existing  # type: ignore[assignment]
            if node.kind != kind or node.options != options:
                raise TraceDivergence(
                    f"{search.name}: choice {self.depth + 1} offers {kind} {list(options)}, "
                    f"not {node.kind} {list(node.options)} as in an earlier execution"
                )
        if self.depth < len(self.path):
            index = self.path[self.depth]
        else:
            index = min(range(len(options)), key=lambda i: (costs[i], i))
        self.node, self.taken = node, index
        self.depth += 1
        return index

    def ended(self) -> None:
        """The run is over: the option taken last leads nowhere further."""
        if self.node is not None and self.node.children.get(self.taken) is None:
            self.node.children[self.taken] = END


class IterativeBoundStrategy(Strategy):
    """Bound 0, 1, 2, ...: the schedules of each bound not run at a smaller one."""

    division = Division.ONE_PROCESS

    def __init__(self, measure: str) -> None:
        if measure not in (PREEMPTIONS, DELAYS):
            raise ValueError(f"unknown measure {measure!r}")
        self.measure = measure
        self.name = "ipb" if measure == PREEMPTIONS else "idb"
        self.cost = preemption_costs if measure == PREEMPTIONS else delay_costs
        self.root: Node | None = None
        self.bound = 0
        self.walk: BoundedWalk | None = None
        self.exhausted = False
        self.executions = 0
        self.executions_at_bound = 0
        self.divergences = 0
        self.inputs_kept = 0
        self._path: list[int] = []
        self._chooser: BoundedChooser | None = None

    def chooser_for(self, execution: int) -> BoundedChooser:
        self._chooser = BoundedChooser(self, self._path)
        return self._chooser

    def observe(self, result: ExecutionResult) -> None:
        self.executions += 1
        self.executions_at_bound += 1
        if result.divergence is not None:
            self.divergences += 1
        chooser = self._chooser
        if chooser is not None:
            if chooser.depth < len(self._path):
                # The run ended (or went another way) before the path's end: give its last option up.
                self._abandon(self._path)
            else:
                chooser.ended()
        self._advance()

    def _abandon(self, path: list[int]) -> None:
        node = self.root
        for index in path[:-1]:
            child = node.children.get(index) if node is not None else None
            if not isinstance(child, Node):
                return
            node = child
        if node is not None:
            node.children.setdefault(path[-1], END)

    def _advance(self) -> None:
        """The next path within the bound; at a bound's end the next bound, or exhausted when nothing was cut."""
        if self.root is None:
            self.exhausted = True  # the program made no choice: its one schedule ran
            return
        if self.walk is None:
            self.walk = BoundedWalk(self.root, self.bound)
        while True:
            path = self.walk.next_path()
            if path is not None:
                self._path = path
                return
            if not self.walk.cut:
                self.exhausted = True
                return
            self.bound += 1
            self.executions_at_bound = 0
            self.walk = BoundedWalk(self.root, self.bound)

    def notes(self) -> dict[str, int]:
        """Which bound the search finished, and where it stood: what the campaign reports."""
        return {
            "bound_covered": self.bound if self.exhausted else self.bound - 1,
            "bound_in_progress": -1 if self.exhausted else self.bound,
            "executions_in_bound_in_progress": 0 if self.exhausted else self.executions_at_bound,
        }

    def verified(self) -> dict | None:
        """An exhausted search ran every schedule: what it covered (DESIGN §3 ``verified``)."""
        if not self.exhausted or self.unverified() is not None:
            return None
        return {
            "bound": "none",
            "executions": self.executions,
            "method": f"iterative {self.measure} bounding, every bound up to {self.bound}, which left nothing out",
            "covers": "every schedule of the program, and every value choice (explored inputs, message matches, "
            "faults) and timed-wait expiry along them",
            "excludes": MODEL_EXCLUDES,
        }

    def unverified(self) -> str | None:
        if not self.exhausted:
            return None
        if self.divergences:
            return (
                f"the program did not repeat itself under the same choices {self.divergences} time(s), "
                "so the tree that was searched is not the program's"
            )
        if self.inputs_kept:
            return (
                f"{self.inputs_kept} choice(s) of the explored inputs kept their default value: {self.name} "
                f"enumerates input values only while their combinations number at most {INPUT_COMBINATIONS}; "
                "pin such an input with --input NAME=VALUE, or narrow its Range, for a statement that covers it"
            )
        return None
