"""Virtual time: one clock per execution, and the delays the scheduler may add.

Every clock the program reads (``time.*``, asyncio's loop time, Ray's and
torch's timeouts) reads this one, as in a deterministic simulator. Time
moves in four ways, all of them functions of the choice sequence, so a
replay reads the same times:

- every step takes a little time (:func:`step_cost`: a microsecond, a
  tenth of a millisecond for a step of the Ray runtime), so agents that
  compute let sleepers wake;
- when no agent can go on but some sleeps or has a timed wait, time jumps to
  the earliest deadline (nothing is delayed: the machine is idle);
- when every agent that can go on only spins (goes round a loop that writes
  nothing, see :mod:`dnsse.engine.spin_watch`), time jumps to the earliest
  deadline too: spinning longer would change nothing;
- the scheduler may *stall* the agents that could run, so that a timed wait
  expires, or a sleeper wakes, before they go on: a recorded choice whose
  cost, the seconds skipped, comes out of the execution's delay budget
  (``--max-delay``). The stalls of one execution add up to at most that
  budget: dnsse explores the program as if the machine could pause its
  agents for that long in total. With ``inf`` any agent may be descheduled
  for any time, and every timed wait may expire wherever it is pending.

So a 2 s ``get`` of an item put at once never expires under the default
bound of 0.1 s, one whose producer first sleeps 5 s always does, and a
timeout shorter than the bound is explored both ways.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# What one step costs in virtual seconds: about what a scheduling point of a
# Python program costs for real (a lock taken, a shared attribute read), so
# that a program computing for a while sees time pass as it would.
STEP_COST = 1e-6
# A step of the Ray runtime (a submission, a get, an actor call's start or end) costs what a round
# through Ray's scheduler and object store costs, about a tenth of a millisecond: a driver's
# ``ray.get(ref, timeout=5)`` on an actor busy forever times out after some 50,000 of them.
RAY_STEP_COST = 1e-4
_RAY_KINDS = ("ray.", "actor.", "task.", "placement_group.")
_costs: dict[str, float] = {}


def step_cost(kind: str) -> float:
    """Virtual seconds a step of operation ``kind`` takes (see :data:`STEP_COST`)."""
    cost = _costs.get(kind)
    if cost is None:
        cost = _costs[kind] = RAY_STEP_COST if kind.startswith(_RAY_KINDS) else STEP_COST
    return cost

DEFAULT_MAX_DELAY = 0.1


@dataclass(frozen=True)
class Stall:
    """A choice that paused every agent that could run until a deadline: ``seconds`` of the delay budget."""

    step: int
    agent: str
    seconds: float
    # Virtual time when the stall ended (the deadline reached).
    until: float


class VirtualClock:
    """The virtual time of one execution, in seconds since it started."""

    __slots__ = ("now", "max_delay", "delayed", "stalls", "moves", "reads")

    def __init__(self, max_delay: float = DEFAULT_MAX_DELAY) -> None:
        self.now = 0.0
        self.max_delay = max_delay
        # Seconds of the delay budget spent so far.
        self.delayed = 0.0
        self.stalls: list[Stall] = []
        # Counts every move of time that is not a step's cost or a clock read's: a program that reads
        # the clock in a loop sees time pass by its reads only while nothing else moves it.
        self.moves = 0
        # Reads of a clock by the program so far (a loop that reads it waits for time, not for others).
        self.reads = 0

    def reach(self) -> float:
        """The latest deadline a stall may still reach now."""
        return self.now + (self.max_delay - self.delayed)

    def advance_to(self, when: float) -> None:
        """Move time forward to ``when`` (a jump, a sleep's end); it never goes back."""
        if when > self.now:
            self.now = when
            self.moves += 1

    def stall_until(self, when: float, step: int, agent: str) -> None:
        """Pause the agents that could run until ``when``, out of the delay budget."""
        seconds = when - self.now
        if seconds <= 0:
            return
        self.delayed += seconds
        self.stalls.append(Stall(step, agent, seconds, when))
        self.now = when
        self.moves += 1


def format_delay(seconds: float) -> str:
    """``0.1s``, or ``inf`` for an unbounded delay."""
    return "inf" if math.isinf(seconds) else f"{seconds:g}s"
