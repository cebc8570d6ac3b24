"""Spin detection: an agent that goes round the same loop while nothing is written.

An agent spins (``while not ready: pass``, a try-lock loop, a poll with a
sleep or a timed wait) when it is about to perform an operation (same kind,
same objects, same source line) for the third time, and the two rounds
before were the same steps (same operations, in the same order: it goes
round one loop), while no step of any agent wrote program state. Nothing it
could observe has changed, so going round again cannot make progress.

What counts as progress:

- a write by any agent, including what a step was found to touch as it ran
  (the footprint recorded in the history, not only what it announced);
- a round that differs from the one before: a loop that starts one thread
  after another, joins them, or walks through different objects (each
  round touches other objects) is making its way through its work, even
  when it writes nothing that a scheduling point names;
- a step that takes the next item of an iterator (``iterate``): a ``for``
  loop over a shared list, summing it, moves on at every round (the
  iterator's position is its own state, which no point names), so its
  agent starts a new record; a loop that polls inside the body of a
  ``for`` loop is not taken for a spin until the ``for`` loop ends.

One line may perform an operation twice in a row (``s.n = s.n + 1`` loads
``s`` twice) without spinning. Writes to virtual time do not count (a
sleeping poll loop still spins), nor do synchronization steps (a lock taken
and given back changes nothing the spinner waits for). A loop that only
reads the same shared state over and over while changing nothing any
scheduling point can see is taken for a spin as well: from outside, it is
one.

Strategies use this to treat a spinning agent as waiting, which is what it
does, instead of letting it starve the agent it waits for: ``pct`` drops
its priority, and every chooser that finishes a run after a plan lets it
yield (:mod:`dnsse.search.finish`).
"""

from __future__ import annotations

from typing import Sequence

from dnsse.engine.operation import CLOCK, Access, Operation

_WRITE = Access.WRITE
# The kind of the steps that take an iterator's next item (frameworks.threads.opcode_points).
_ITERATE = "iterate"

# Rounds are recognised up to this many earlier performances of the operation
# since the last write: a loop body performing one operation more often than
# this per round is taken for progress.
CANDIDATE_PERIODS = 8


def same_operation(recorded: Operation, pending: Operation) -> bool:
    """Whether a step recorded in the history performed ``pending`` (it may have touched more as it ran)."""
    if recorded is pending or recorded == pending:
        return True
    return (
        recorded.kind == pending.kind
        and recorded.detail == pending.detail
        and set(pending.objects) <= set(recorded.objects)
    )


class _Since:
    """One agent's steps since the last write anywhere."""

    __slots__ = ("writes", "steps", "at")

    def __init__(self, writes: int) -> None:
        self.writes = writes  # the write count when this record was started
        self.steps: list[Operation] = []
        # (kind, line) -> positions in ``steps`` where it was performed, latest last.
        self.at: dict[tuple[str, str], list[int]] = {}


class SpinWatch:
    """Follows one execution's history and says which pending operation would spin."""

    __slots__ = ("seen_steps", "writes", "since")

    def __init__(self) -> None:
        self.seen_steps = 0
        self.writes = 0  # steps so far that wrote program state
        self.since: dict[int, _Since] = {}

    def follow(self, history: Sequence[tuple[int, Operation]]) -> None:
        """Take in the steps of ``history`` not seen yet."""
        # Runs for every step of a pct execution, so inlined. A step writes program state when it
        # writes an object other than virtual time. It makes every record so far stale, its own
        # agent's included, so it is added to none.
        since = self.since
        writes = self.writes
        for agent, operation in history[self.seen_steps :]:
            for name, access in operation.objects:
                if access is _WRITE and name != CLOCK:
                    writes += 1
                    break
            else:
                record = since.get(agent)
                if record is None or record.writes != writes or operation.kind == _ITERATE:
                    record = since[agent] = _Since(writes)
                steps = record.steps
                key = (operation.kind, operation.detail)
                positions = record.at.get(key)
                if positions is None:
                    record.at[key] = [len(steps)]
                else:
                    positions.append(len(steps))
                    if len(positions) > CANDIDATE_PERIODS + 1:
                        del positions[0]
                steps.append(operation)
        self.writes = writes
        self.seen_steps = len(history)

    def moving(self, runnable: Sequence[int], operations: Sequence[Operation]) -> list[int]:
        """Indices in ``runnable`` of the agents whose pending operation (``operations[i]``) would not spin."""
        # Asked at every choice of dfs and the directed choosers: an agent whose record a write made
        # stale is known to make progress without the call.
        since = self.since
        writes = self.writes
        moving = []
        for index, agent in enumerate(runnable):
            record = since.get(agent)
            if record is None or record.writes != writes or not self.spinning(agent, operations[index]):
                moving.append(index)
        return moving

    def spinning(self, agent: int, operation: Operation) -> bool:
        """Whether ``operation`` would take ``agent`` round the same loop a third time with no write anywhere."""
        record = self.since.get(agent)
        if record is None or record.writes != self.writes:
            return False
        positions = record.at.get((operation.kind, operation.detail))
        if positions is None:
            return False
        steps = record.steps
        for position in reversed(positions):
            if not same_operation(steps[position], operation):
                continue  # this line touched other objects then
            period = len(steps) - position
            start = len(steps) - 2 * period
            if start >= 0 and same_operation(steps[start], operation) and steps[start:position] == steps[position:]:
                return True
        return False
