"""``dfs``: systematic search that ends with a statement of what it covered.

Executions walk the tree of choice sequences depth first, one branch per
execution (the engine is stateless: each run starts over and replays a
prefix). Two modes, each with a guarantee that holds when the search
exhausts its tree without a bug:

**No bound (default): dynamic partial-order reduction.** Source-DPOR
(Abdulla et al., JACM 2017) with sleep sets (Godefroid 1996), on what each
step touched as it ran. After each execution, every race that another order
could reverse (:mod:`dnsse.search.races`) schedules one agent that starts
the reversed order at the state before the earlier step; sleep sets keep
equivalent orders of independent steps from being run twice. Races between
two acquisitions of one lock are reversed in a second pass, after every
other race (:mod:`dnsse.search.dfs_first_pass`), and a receive asleep on
the message it took is woken by another message only to take that one
(:meth:`DfsChooser._wake`). Guarantee: every schedule
of the program is equivalent (same steps, dependent steps in the same order,
see :mod:`dnsse.search.dependency`) to an executed one, so every deadlock,
exception or mismatch any schedule can show was seen.

**Preemption bound k: exhaustive within the bound, without reduction.**
Every schedule with at most ``k`` preemptions (switching away from an agent
that could have continued) is executed. Reduction is off in this mode on
purpose: equivalent schedules differ in their number of preemptions, so
pruning by equivalence and bounding preemptions together would drop
schedules within the bound (the pitfall of naive bounded DPOR). The bound
is sound and exact: nothing with at most ``k`` preemptions is left out.

In both modes every value choice (which message an any-source receive
matches, faults) is enumerated, and a pending timed wait's expiry is a step
like any other (it races with the step that would satisfy the wait, so
both outcomes are run); the seed of the program's random generators is
fixed to 0. The values of the explored inputs are value choices too, taken
before the first step, so each value gets a search of its own schedules:
they are enumerated while their combinations number at most
``INPUT_COMBINATIONS``. An input with more values than that (a float, a
tensor, a wide ``Range``) keeps its default, and then the search promises
nothing (``unverified`` says which were kept): a statement for one value
of an input the user asked to explore would read as one for all of them.
Both guarantees hold relative to what the model sees: objects a step touches
that no operation names (state held in C extensions, Python objects shared
by torch ranks outside ``torch.distributed``) are not dependencies. A rank's
tensors are covered: its async transfers name the rank (``agent#N``), so
they are dependent on every step of its code.
"""

from __future__ import annotations

from dnsse.engine.runner import ExecutionResult
from dnsse.search.dfs_chooser import INPUT_COMBINATIONS, DfsChooser
from dnsse.search.dfs_first_pass import FirstPassRuns, SeenRun, branch_key
from dnsse.search.dfs_state import dfs_state, restore_dfs
from dnsse.search.dfs_tree import AgentNode, DfsNode, add_backtrack, alternative, copy_node
from dnsse.search.races import reversible_races
from dnsse.search.strategy import Division, Strategy

MODEL_EXCLUDES = (
    "the seed of the program's random generators is fixed to 0, and inputs pinned with --input or without "
    "values to explore (an int or float without a Range) keep their value; "
    "executions are cut at the step limit (--max-steps); dependencies that no scheduling point names are "
    "not seen: state held in C extensions or outside the process, and Python objects that torch ranks share "
    "outside torch.distributed (ranks are not traced opcode by opcode as threads are)"
)



class DfsStrategy(Strategy):
    """Depth-first over choice sequences; sets ``exhausted`` when the tree is done."""

    name = "dfs"
    division = Division.TREE

    def __init__(self, bound: int | None = None, lock_order_last: bool = False) -> None:
        if bound is not None and bound < 0:
            raise ValueError("the preemption bound must be at least 0")
        self.bound = bound
        # A first pass keeps every lock's critical sections in the order they
        # first ran (races between two acquisitions of one lock are counted,
        # not reversed); a second pass over the whole tree reverses them too.
        # Off for a subtree of a divided search: a slice that stops in its first
        # pass would hand back a frontier without the races it put off.
        self.first_pass = lock_order_last and bound is None
        self.put_off = 0  # lock-order races the first pass did not reverse
        self._first_runs = FirstPassRuns()
        self._running: tuple = ()  # the branch_key of the execution running now
        self.path: list[DfsNode] = []
        self.replay = 0
        self.exhausted = False
        self.executions = 0
        self.redundant = 0  # executions cut short by sleep sets
        self.divergences = 0
        self.untrusted: str | None = None  # the first reason a step's footprint may be incomplete
        # Input choices that kept their default, having more values than dfs enumerates.
        self.inputs_kept = 0
        self._chooser: DfsChooser | None = None
        # Nodes above ``floor`` are a prefix this search was given (a subtree
        # of a search divided among workers, dnsse.search.dfs_split): it
        # explores only below them, and races that reverse at one of them
        # are ``escaped`` as (depth, initials, agent) for the owner of that node.
        self.floor = 0
        self.escaped: list[tuple[int, frozenset[int], int]] = []

    def chooser_for(self, execution: int) -> DfsChooser:
        if self.first_pass:
            self._running = branch_key(self.path, self.replay)
        self._chooser = DfsChooser(self, self.replay)
        return self._chooser

    def observe(self, result: ExecutionResult) -> None:
        self.executions += 1
        if result.untrusted is not None and self.untrusted is None:
            self.untrusted = result.untrusted
        if self._chooser is not None and self._chooser.blocked:
            self.redundant += 1
        if result.divergence is not None:
            # The program did not repeat itself under the same choices: the
            # tree is not what was explored, so no guarantee can be given.
            self.divergences += 1
            del self.path[self.replay :]
        elif self.bound is None:
            self._note_footprints(result)
            if self.first_pass:
                added = [copy_node(node) for node in self.path[self.replay :]]
                self._first_runs.keep(self._running, SeenRun(added, result.history, result.pending, result.created_at))
            self._add_backtracking(result)
        self._advance()

    def state(self) -> dict:
        """The search tree and its counts, for a resumed campaign (see dnsse.search.dfs_state)."""
        return dfs_state(self)

    def restore(self, state: dict, rerun: object = None) -> None:
        restore_dfs(self, state)

    def verified(self) -> dict | None:
        """What an exhausted search covered (DESIGN §3 ``verified``), or ``None``."""
        if not self.exhausted or self.unverified() is not None:
            return None
        if self.bound is None:
            return {
                "bound": "none",
                "executions": self.executions,
                "method": "source-DPOR with sleep sets, on the footprints steps showed as they ran",
                "covers": "every schedule is equivalent to an executed one (same steps, dependent steps in the "
                "same order, timed waits expiring or not), and every value choice (explored inputs, message "
                "matches, faults) was enumerated",
                "excludes": MODEL_EXCLUDES,
            }
        return {
            "bound": f"preemptions<={self.bound}",
            "executions": self.executions,
            "method": "exhaustive preemption-bounded search (no reduction, so the bound is exact)",
            "covers": f"every schedule with at most {self.bound} preemptions, for every value of the explored "
            "inputs, and every value choice (message matches, faults) and timed-wait expiry along them",
            "excludes": MODEL_EXCLUDES,
        }

    def unverified(self) -> str | None:
        """Why an exhausted search promises nothing: a step touched what dnsse did not see, or no replay."""
        if not self.exhausted:
            return None
        if self.divergences:
            return (
                f"the program did not repeat itself under the same choices {self.divergences} time(s), "
                "so the tree that was searched is not the program's"
            )
        if self.untrusted is not None and self.bound is None:
            return f"the reduction relies on what each step touched, and at {self.untrusted}"
        if self.inputs_kept:
            return (
                f"{self.inputs_kept} choice(s) of the explored inputs kept their default value: dfs enumerates "
                f"input values only while their combinations number at most {INPUT_COMBINATIONS} (a float, a "
                "tensor or a wide Range has more), so the schedules were searched for the defaults only; pin "
                "such an input with --input NAME=VALUE, or narrow its Range, for a statement that covers it"
            )
        return None

    # ----------------------------------------------------------- the search
    def _advance(self) -> None:
        """Pick the deepest node with an unexplored alternative; exhausted when none.

        In the second pass, an execution the first pass already ran is read
        back instead of run again (:mod:`dnsse.search.dfs_first_pass`).
        """
        while True:
            self._deepest_alternative()
            if len(self.path) == self.floor:
                if not (self.first_pass and self.put_off):
                    self._first_runs.clear()
                    self.exhausted = True
                    return
                # Every other race was reversed; now the whole tree, lock orders included.
                self.first_pass = False
            if self.first_pass:
                return
            seen = self._first_runs.take(branch_key(self.path, self.replay))
            if seen is None:
                return
            self.path.extend(copy_node(node) for node in seen.added)
            self._note_footprints(seen)
            self._add_backtracking(seen)

    def _deepest_alternative(self) -> None:
        """Go down to the deepest node with an unexplored alternative and take it (or to the floor)."""
        while len(self.path) > self.floor:
            node = self.path[-1]
            choice = alternative(node, self.bound)
            if choice is not None:
                node.chosen = choice
                if isinstance(node, AgentNode):
                    node.done.append(choice)
                self.replay = len(self.path)
                return
            self.path.pop()
        self.replay = self.floor

    def _note_footprints(self, result: ExecutionResult | SeenRun) -> None:
        """What each chosen step touched, as it ran: what it names when it sleeps in a later branch."""
        for node in self.path:
            if isinstance(node, AgentNode) and node.step <= len(result.history):
                agent, operation = result.history[node.step - 1]
                if agent == node.chosen:
                    node.operations[agent] = operation

    def _add_backtracking(self, result: ExecutionResult | SeenRun) -> None:
        """Source-DPOR: from the state before each reversible race, schedule one agent that starts its reversal."""
        nodes = {node.step: node for node in self.path if isinstance(node, AgentNode)}
        depth = {id(node): index for index, node in enumerate(self.path)}
        if not nodes:
            return

        def runnable_before(index: int) -> tuple[int, ...] | None:
            node = nodes.get(index + 1)
            return node.runnable if node is not None else None

        for race in reversible_races(result.history, result.pending, result.created_at, runnable_before):
            if self.first_pass and race.orders_critical_sections:
                self.put_off += 1
                continue
            node = nodes[race.earlier + 1]
            if add_backtrack(node, race.initials, race.agent) and depth[id(node)] < self.floor:
                # Local copies of a given prefix only stop repeats; its owner decides.
                self.escaped.append((depth[id(node)], race.initials, race.agent))
