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
equivalent orders of independent steps from being run twice. Guarantee: every schedule
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

from dataclasses import dataclass, field, replace
from typing import Sequence

from dnsse.engine.choices import ChoiceKind, FirstChooser, TraceDivergence
from dnsse.engine.inputs import is_open
from dnsse.engine.operation import Access, Operation, is_expiry
from dnsse.engine.object_names import number_of
from dnsse.engine.runner import ExecutionResult
from dnsse.search.dependency import dependent_across, offers_only
from dnsse.search.dfs_first_pass import FirstPassRuns, SeenRun, branch_key
from dnsse.search.dfs_state import dfs_state, restore_dfs
from dnsse.search.finish import Finish
from dnsse.search.races import reversible_races

SEED = 0
# Steps an agent that could go on (or whose timed wait could expire) is passed
# over, in the first schedule of a branch, before it goes first.
PATIENCE = 200
# The most combinations of explored input values dfs enumerates (each gets a search of its own).
INPUT_COMBINATIONS = 64
MODEL_EXCLUDES = (
    "the seed of the program's random generators is fixed to 0, and inputs pinned with --input or without "
    "values to explore (an int or float without a Range) keep their value; "
    "executions are cut at the step limit (--max-steps); dependencies that no scheduling point names are "
    "not seen: state held in C extensions or outside the process, and Python objects that torch ranks share "
    "outside torch.distributed (ranks are not traced opcode by opcode as threads are)"
)


@dataclass
class _AgentNode:
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
class _ValueNode:
    """A value choice (message match, timeout, fault) on the current path."""

    kind: str
    options: int
    chosen: int


_Node = _AgentNode | _ValueNode


class DfsChooser:
    """Replays the path prefix the strategy chose, then extends it with new nodes."""

    wants_operations = True

    def __init__(self, search: DfsStrategy, replay: int) -> None:
        self.search = search
        self.replay = replay  # how many nodes of search.path to replay
        self.position = 0
        self.sleep: dict[int, tuple[Operation, int]] = {}
        # Receives awake only to take another message than the one they took in an explored branch.
        self.taking: dict[int, tuple[str, Operation, int]] = {}
        self.seen_steps = 0
        # Agent -> index of its latest step in the history (or when it was first seen runnable).
        self.last_step: dict[int, int] = {}
        self.known = 0  # objects named so far (the highest oN in the history)
        self.preemptions = 0
        self.blocked = False  # every runnable agent was asleep: the rest is redundant
        self.input_combinations = 1  # of the input values enumerated so far in this execution
        self.inputs_kept = 0  # input choices of this execution left at their default
        # The first schedule of a branch lets the current agent go on, unless it is caught spinning.
        self.finish = Finish(FirstChooser())

    def next_value(self, kind: str, options: int) -> int:
        if kind == ChoiceKind.SEED:
            return SEED
        if kind == ChoiceKind.INPUT:
            if is_open(options):
                return 0  # an int or float without a Range keeps its value, as MODEL_EXCLUDES says
            if self.input_combinations * options > INPUT_COMBINATIONS:
                self.inputs_kept += 1
                self.search.inputs_kept = max(self.search.inputs_kept, self.inputs_kept)
                return 0  # the default value; `unverified` says the search covered it only
            self.input_combinations *= options
        if self.blocked:
            return 0
        node = self._replayed()
        if node is not None:
            if not isinstance(node, _ValueNode) or node.kind != kind or node.options != options:
                raise TraceDivergence(
                    f"dfs: the program asked for a {kind} choice among {options} where it did not before"
                )
            return node.chosen
        self.search.path.append(_ValueNode(kind, options, 0))
        return 0

    def next_agent(self, runnable: Sequence[int], current: int | None, step: int) -> int:
        raise TypeError("DfsChooser needs the operations of runnable agents (wants_operations)")

    def next_agent_seeing(
        self,
        runnable: Sequence[int],
        current: int | None,
        step: int,
        operations: Sequence[Operation],
        history: Sequence[tuple[int, Operation]],
    ) -> int:
        reduce = self.search.bound is None
        for index in range(self.seen_steps, len(history)):
            agent, operation = history[index]
            self.last_step[agent] = index
            if reduce:
                if self.sleep or self.taking:
                    self._wake(agent, operation)
                known = self.known
                for name, _ in operation.objects:
                    if name.startswith("o"):  # the names number_of knows, oN and oN.attr
                        number = number_of(name)
                        if number is not None and number > known:
                            known = number
                self.known = known
        self.seen_steps = len(history)
        self.finish.follow(history)
        for agent in runnable:
            self.last_step.setdefault(agent, self.seen_steps)  # waiting since it was first seen
        if self.blocked:
            return self._keep_going(runnable, current, step, operations)
        node = self._replayed()
        if node is not None:
            if not isinstance(node, _AgentNode) or node.runnable != tuple(runnable):
                raise TraceDivergence(
                    f"dfs: at step {step} the runnable agents are {list(runnable)}, not as in an earlier execution"
                )
        else:
            pending = dict(zip(runnable, operations))
            awake = set(runnable) - set(self.sleep)
            starved = self._starved(set(runnable))
            # A starved agent that sleeps must run all the same (the run has to
            # end), and any schedule that runs it here is redundant.
            if reduce and (not awake or starved in self.sleep):
                self.blocked = True
                return self._keep_going(runnable, current, step, operations)
            moving = {runnable[i] for i in self.finish.moving(runnable, operations)}
            chosen = self._first_choice(current, (awake & moving) or awake, pending, starved)
            node = _AgentNode(
                step, tuple(runnable), pending, current, self.preemptions, dict(self.sleep), self.known, chosen
            )
            node.done.append(chosen)
            node.backtrack.add(chosen)
            self.search.path.append(node)
        chosen = node.chosen
        if reduce:
            # Siblings explored before this branch sleep until a dependent step wakes them.
            for sibling in node.done[: node.done.index(chosen)]:
                self.sleep[sibling] = (node.operations[sibling], node.known)
            self.sleep.pop(chosen, None)
        if node.preempts(chosen):
            self.preemptions += 1
        return list(runnable).index(chosen)

    def _wake(self, agent: int, operation: Operation) -> None:
        """Wake the sleepers that the step of ``agent`` depends on.

        A receive asleep on a message it took in an explored branch is not
        woken when another message is posted that it could take instead:
        taking the first one again would repeat that branch, so it only
        moves to ``taking``, where it may take any other message; taking
        the same one ends the run as redundant.
        """
        for sleeper, (asleep, known) in list(self.sleep.items()):
            if dependent_across(sleeper, asleep, known, agent, operation):
                del self.sleep[sleeper]
                taken = offers_only(sleeper, asleep, agent, operation)
                if taken is not None:
                    self.taking[sleeper] = (taken, asleep, known)
        for sleeper, (taken, asleep, known) in list(self.taking.items()):
            if sleeper == agent:
                del self.taking[sleeper]
                if any(name == taken and access is not Access.READ for name, access in operation.objects):
                    self.blocked = True
            elif dependent_across(sleeper, asleep, known, agent, operation) and (
                offers_only(sleeper, asleep, agent, operation) is None
            ):
                del self.taking[sleeper]

    @staticmethod
    def _first_choice(current: int | None, awake: set[int], pending: dict[int, Operation], starved: int | None) -> int:
        """Keep the current agent when it can go on (no preemption), else the lowest id.

        ``awake`` leaves out agents caught spinning while another can make
        progress (:class:`~dnsse.search.finish.Finish`). Two more exceptions
        keep the first schedule of a branch fair, as real runs are: an agent
        passed over for ``PATIENCE`` steps goes first (an agent that loops
        forever, writing as it goes, must not starve the rest, nor keep a
        timeout from ever firing); and a timed wait gives up first only when
        nothing else is awake. Every other order is explored where a race
        says so.
        """
        if starved is not None:
            return starved
        if current is not None and current in awake:
            return current
        waiting = {agent for agent in awake if not is_expiry(pending[agent])}
        return min(waiting or awake)

    def _keep_going(
        self, runnable: Sequence[int], current: int | None, step: int, operations: Sequence[Operation]
    ) -> int:
        """Past a sleep-set block the run only has to end: no new nodes, no preemptions but fair ones.

        Agents that can go on come before expiring waits in ``runnable``.
        """
        starved = self._starved(set(runnable))
        if starved is not None:
            return list(runnable).index(starved)
        return self.finish.next_agent(runnable, current, step, operations)

    def _starved(self, candidates: set[int]) -> int | None:
        """The agent that has not run for longest, once that is ``PATIENCE`` steps."""
        last_step = self.last_step
        longest = -1
        since: int | None = None
        for agent in candidates:  # the least (last step, agent), without min()'s key tuples
            step = last_step[agent]
            if since is None or step < since or (step == since and agent < longest):
                longest, since = agent, step
        return longest if since is not None and self.seen_steps - since > PATIENCE else None

    def _replayed(self) -> _Node | None:
        """The next node of the prefix to replay; ``None`` past the prefix."""
        if self.position >= self.replay:
            return None
        node = self.search.path[self.position]
        self.position += 1
        return node


class DfsStrategy:
    """Depth-first over choice sequences; sets ``exhausted`` when the tree is done."""

    name = "dfs"

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
        self.path: list[_Node] = []
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
                added = [_copy(node) for node in self.path[self.replay :]]
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
            self.path.extend(_copy(node) for node in seen.added)
            self._note_footprints(seen)
            self._add_backtracking(seen)

    def _deepest_alternative(self) -> None:
        """Go down to the deepest node with an unexplored alternative and take it (or to the floor)."""
        while len(self.path) > self.floor:
            node = self.path[-1]
            choice = alternative(node, self.bound)
            if choice is not None:
                node.chosen = choice
                if isinstance(node, _AgentNode):
                    node.done.append(choice)
                self.replay = len(self.path)
                return
            self.path.pop()
        self.replay = self.floor

    def _note_footprints(self, result: ExecutionResult | SeenRun) -> None:
        """What each chosen step touched, as it ran: what it names when it sleeps in a later branch."""
        for node in self.path:
            if isinstance(node, _AgentNode) and node.step <= len(result.history):
                agent, operation = result.history[node.step - 1]
                if agent == node.chosen:
                    node.operations[agent] = operation

    def _add_backtracking(self, result: ExecutionResult | SeenRun) -> None:
        """Source-DPOR: from the state before each reversible race, schedule one agent that starts its reversal."""
        nodes = {node.step: node for node in self.path if isinstance(node, _AgentNode)}
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


def _copy(node: _Node) -> _Node:
    if isinstance(node, _ValueNode):
        return replace(node)
    return replace(
        node, operations=dict(node.operations), sleep=dict(node.sleep), done=list(node.done), backtrack=set(node.backtrack)
    )


def alternative(node: _Node, bound: int | None) -> int | None:
    """The next unexplored choice at ``node`` (the lowest agent or the next value), or ``None``."""
    if isinstance(node, _ValueNode):
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


def add_backtrack(node: _AgentNode, initials: frozenset[int], agent: int) -> bool:
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
