"""The chooser of one dfs execution: replays the strategy's path, then extends it.

Past the replayed prefix, each new scheduling choice lets the current agent
go on (the first schedule of a branch), keeps the sleep set of source-DPOR
up to date with each step that ran, and ends the run as redundant once every
runnable agent sleeps.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from dnsse.engine.choices import ChoiceKind, FirstChooser, TraceDivergence
from dnsse.engine.inputs import is_open
from dnsse.engine.object_names import number_of
from dnsse.engine.operation import Access, Operation, is_expiry
from dnsse.search.dependency import dependent_across, offers_only
from dnsse.search.dfs_tree import AgentNode, DfsNode, ValueNode
from dnsse.search.finish import Finish

if TYPE_CHECKING:
    from dnsse.search.dfs import DfsStrategy

SEED = 0
# Steps an agent that could go on (or whose timed wait could expire) is passed
# over, in the first schedule of a branch, before it goes first.
PATIENCE = 200
# The most combinations of explored input values dfs enumerates (each gets a search of its own).
INPUT_COMBINATIONS = 64


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
        # Every runnable agent was asleep, or a receive took again what it took in an explored
        # branch: the rest of the run is redundant.
        self.blocked = False
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
            if not isinstance(node, ValueNode) or node.kind != kind or node.options != options:
                raise TraceDivergence(
                    f"dfs: the program asked for a {kind} choice among {options} where it did not before"
                )
            return node.chosen
        self.search.path.append(ValueNode(kind, options, 0))
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
            if not isinstance(node, AgentNode) or node.runnable != tuple(runnable):
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
            node = AgentNode(
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

    def _replayed(self) -> DfsNode | None:
        """The next node of the prefix to replay; ``None`` past the prefix."""
        if self.position >= self.replay:
            return None
        node = self.search.path[self.position]
        self.position += 1
        return node
