"""pct, pos and their helpers choose what their straightforward definitions choose, seed for seed.

``PctChooser``, ``PosChooser``, ``SpinWatch`` and ``dependent`` run at every
scheduling point, so they are written for speed: loops unrolled for two
agents, records skipped where a write makes them stale, no tuples built to
compare two operations. A seed must keep its schedules (traces are replayed
and seeds rerun), so each is run here against the plain version it
replaced, on synthetic executions of many seeds: agents going round short
loops of reads and writes (so that spinning is caught, and steps race),
with timed waits, single-option steps the chooser is not asked about, and
steps found to touch more as they ran.
"""

from __future__ import annotations

import random
from typing import Sequence

import pytest

from dnsse.engine.operation import CLOCK, Access, Operation
from dnsse.search.dependency import dependent, touches
from dnsse.search.pct import PctChooser
from dnsse.search.pos import PosChooser
from dnsse.engine.spin_watch import CANDIDATE_PERIODS, SpinWatch, same_operation

# ---------------------------------------------------------------- the plain versions


def plain_dependent(agent: int, operation: Operation, other_agent: int, other: Operation) -> bool:
    if agent == other_agent:
        return True
    for name, access in touches(agent, operation):
        for other_name, other_access in touches(other_agent, other):
            if name == other_name and not (access is Access.READ and other_access is Access.READ):
                return True
    return False


class PlainSpinWatch:
    def __init__(self) -> None:
        self.seen_steps = 0
        self.writes = 0
        self.since: dict[int, tuple[int, list[Operation], dict]] = {}

    def follow(self, history: Sequence[tuple[int, Operation]]) -> None:
        for index in range(self.seen_steps, len(history)):
            agent, operation = history[index]
            record = self.since.get(agent)
            if record is None or record[0] != self.writes:
                record = self.since[agent] = (self.writes, [], {})
            positions = record[2].setdefault((operation.kind, operation.detail), [])
            positions.append(len(record[1]))
            if len(positions) > CANDIDATE_PERIODS + 1:
                del positions[0]
            record[1].append(operation)
            if any(access is Access.WRITE and name != CLOCK for name, access in operation.objects):
                self.writes += 1
        self.seen_steps = len(history)

    def spinning(self, agent: int, operation: Operation) -> bool:
        record = self.since.get(agent)
        if record is None or record[0] != self.writes:
            return False
        steps = record[1]
        for position in reversed(record[2].get((operation.kind, operation.detail), [])):
            if not same_operation(steps[position], operation):
                continue
            period = len(steps) - position
            start = len(steps) - 2 * period
            if start >= 0 and same_operation(steps[start], operation) and steps[start:position] == steps[position:]:
                return True
        return False


class PlainPct:
    def __init__(self, seed: int, depth: int, steps: int) -> None:
        self.rng = random.Random(seed)
        self.depth = depth
        self.priorities: dict[int, float] = {}
        points = self.rng.sample(range(1, steps + 1), min(depth - 1, steps))
        self.change_points = {point: float(depth - i) for i, point in enumerate(sorted(points), start=1)}
        self.choices_made = 0
        self.watch = PlainSpinWatch()
        self.lowest = 1.0
        self.spins = 0

    def _priority(self, agent: int) -> float:
        priority = self.priorities.get(agent)
        if priority is None:
            priority = self.priorities[agent] = self.depth + self.rng.random()
        return priority

    def _best(self, runnable: Sequence[int]) -> int:
        return max(range(len(runnable)), key=lambda i: self._priority(runnable[i]))

    def next_agent_seeing(self, runnable, current, step, operations, history) -> int:  # type: ignore[no-untyped-def]
        self.choices_made += 1
        self.watch.follow(history)
        best = self._best(runnable)
        lowered = self.change_points.get(self.choices_made)
        if lowered is not None:
            self.priorities[runnable[best]] = lowered
            best = self._best(runnable)
        for _ in range(len(runnable) - 1):
            if not self.watch.spinning(runnable[best], operations[best]):
                break
            self.lowest -= 1.0
            self.priorities[runnable[best]] = self.lowest
            self.spins += 1
            best = self._best(runnable)
        return best

    def next_value(self, kind: str, options: int) -> int:
        return self.rng.randrange(options)


class PlainPos:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.priority: dict[int, float] = {}
        self.pending: dict[int, Operation] = {}
        self.seen_steps = 0

    def next_agent_seeing(self, runnable, current, step, operations, history) -> int:  # type: ignore[no-untyped-def]
        for agent, operation in history[self.seen_steps :]:
            self.priority.pop(agent, None)
            self.pending.pop(agent, None)
            for other, pending in list(self.pending.items()):
                if plain_dependent(agent, operation, other, pending):
                    del self.priority[other]
                    del self.pending[other]
        self.seen_steps = len(history)
        best = 0
        best_priority = -1.0
        for index, (agent, operation) in enumerate(zip(runnable, operations)):
            priority = self.priority.get(agent)
            if priority is None:
                priority = self.priority[agent] = self.rng.random()
                self.pending[agent] = operation
            if priority > best_priority:
                best, best_priority = index, priority
        return best

    def next_value(self, kind: str, options: int) -> int:
        return self.rng.randrange(options)


# ---------------------------------------------------------------- synthetic executions

OBJECTS = ("o1.x", "o1.y", "o2", CLOCK, "agent#0", "agent#1", "agent#2")
KINDS = ("attr.load", "attr.store", "lock.acquire", "sleep", "thread.join")


def random_operation(rng: random.Random, writes: float) -> Operation:
    objects = []
    for name in rng.sample(OBJECTS, rng.choice((0, 1, 1, 1, 2))):
        access = Access.WRITE if rng.random() < writes else rng.choice((Access.READ, Access.READ, Access.SYNC, Access.RELEASE))
        objects.append((name, access))
    return Operation(rng.choice(KINDS), tuple(objects), f"prog.py:{rng.randint(1, 4)}")


def execute(chooser: object, seed: int, steps: int = 400) -> list[int]:
    """The indices ``chooser`` answers over one synthetic execution, and the agents of its steps."""
    rng = random.Random(seed)
    agents = rng.randint(2, 5)
    writes = rng.choice((0.0, 0.05, 0.3))
    # Each agent goes round a loop of one to three operations; now and then it leaves for another.
    loops = [[random_operation(rng, writes) for _ in range(rng.randint(1, 3))] for _ in range(agents)]
    at = [0] * agents
    history: list[tuple[int, Operation]] = []
    answers: list[int] = []
    for step in range(steps):
        runnable = sorted(rng.sample(range(agents), rng.randint(1, agents)))
        operations = [loops[a][at[a] % len(loops[a])] for a in runnable]
        # A few agents' waits may expire instead: listed last, their operation the expiry.
        if len(runnable) > 1 and rng.random() < 0.1:
            runnable = runnable[1:] + runnable[:1]
            operations = operations[1:] + [Operation(operations[0].kind + ".timeout", operations[0].objects + ((CLOCK, Access.WRITE),))]
        if len(runnable) == 1:
            index = 0  # not a choice: the chooser is not asked
        else:
            index = chooser.next_agent_seeing(runnable, None, step, operations, history)  # type: ignore[attr-defined]
            answers.append(index)
        agent = runnable[index]
        history.append((agent, operations[index]))
        if rng.random() < 0.1:  # the step touched more than it announced
            history[-1] = (agent, operations[index].touching(((rng.choice(OBJECTS), rng.choice(list(Access))),)))
        at[agent] += 1
        if rng.random() < 0.03:
            loops[agent] = [random_operation(rng, writes) for _ in range(rng.randint(1, 3))]
    answers.append(sum(1 for a, _ in history if a == 0))
    return answers


@pytest.mark.parametrize("depth", [1, 3, 5])
def test_pct_chooses_as_its_plain_definition(depth: int) -> None:
    for seed in range(80):
        steps = random.Random(seed).choice((20, 400))
        fast, plain = PctChooser(seed, depth, steps), PlainPct(seed, depth, steps)
        assert execute(fast, seed) == execute(plain, seed), seed
        assert fast.spins == plain.spins
        assert fast.next_value("input", 7) == plain.next_value("input", 7)


def test_pct_catches_spinning_in_these_executions() -> None:
    """The comparison above covers the spinning agents' path: some executions drop agents."""
    spins = 0
    for seed in range(80):
        chooser = PctChooser(seed, 3, 400)
        execute(chooser, seed)
        spins += chooser.spins > 0
    assert spins > 10


def test_pos_chooses_as_its_plain_definition() -> None:
    for seed in range(100):
        fast, plain = PosChooser(seed), PlainPos(seed)
        assert execute(fast, seed) == execute(plain, seed), seed
        assert fast.next_value("input", 7) == plain.next_value("input", 7)


def test_spin_watch_answers_as_its_plain_definition() -> None:
    """Whether an agent spins, and which agents move on, with records that writes make stale."""
    rng = random.Random(5)
    for trial in range(200):
        agents = rng.randint(1, 3)
        writes = rng.choice((0.0, 0.1))
        loops = [[random_operation(rng, writes) for _ in range(rng.randint(1, 4))] for _ in range(agents)]
        history: list[tuple[int, Operation]] = []
        fast, plain = SpinWatch(), PlainSpinWatch()
        for step in range(60):
            agent = rng.randrange(agents)
            operation = loops[agent][step % len(loops[agent])]
            if rng.random() < 0.5:
                fast.follow(history)
                plain.follow(history)
                pendings = [loops[asked][(step + 1) % len(loops[asked])] for asked in range(agents)]
                for asked in range(agents):
                    assert fast.spinning(asked, pendings[asked]) == plain.spinning(asked, pendings[asked]), (trial, step)
                plain_moving = [i for i in range(agents) if not plain.spinning(i, pendings[i])]
                assert fast.moving(range(agents), pendings) == plain_moving
            history.append((agent, operation))


def test_dependent_is_what_touches_says() -> None:
    rng = random.Random(3)
    for _ in range(20_000):
        agent, other = rng.randrange(3), rng.randrange(3)
        first, second = random_operation(rng, 0.3), random_operation(rng, 0.3)
        assert dependent(agent, first, other, second) == plain_dependent(agent, first, other, second)
