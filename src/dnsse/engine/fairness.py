"""Fair scheduling after a bounded prefix, whatever the strategy.

A strategy may starve a runnable agent only during the first
``Limits.unfair_steps`` steps of an execution (as Coyote's liveness checking
and CHESS's fair scheduler do): that is where the bugs that need a long
stall live, and pct's priorities are about that prefix. After it, an agent
that could have run but did not for :data:`PATIENCE` steps takes the next
step: the engine offers the strategy no other option. So a livelock, the
step limit reached, is one under fair scheduling: an agent that keeps
running while another never can, not one that the strategy kept choosing
while another waited for its turn.

The rule depends only on the history, so a replay narrows the same steps.
"""

from __future__ import annotations

# Steps an agent that can run may be passed over, past the unfair prefix, before it must run.
PATIENCE = 32


class Fairness:
    """When each agent last took a step, and which one is owed the next step."""

    __slots__ = ("unfair_steps", "last_ran")

    def __init__(self, unfair_steps: int) -> None:
        self.unfair_steps = unfair_steps
        # By agent id: the step it last took, or the step it was created in.
        self.last_ran: list[int] = []

    def added(self, step: int) -> None:
        self.last_ran.append(step)

    def owed(self, candidates: list[int], step: int) -> int | None:
        """The index in ``candidates`` (agent ids that can run) of the one owed this step, if any."""
        last_ran = self.last_ran
        oldest = 0
        for index in range(1, len(candidates)):
            if last_ran[candidates[index]] < last_ran[candidates[oldest]]:
                oldest = index
        return oldest if step - last_ran[candidates[oldest]] > PATIENCE else None
