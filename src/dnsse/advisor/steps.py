"""Every step of an execution, named as an advisor names it (agent, operation, objects, line).

A scheduling choice sees only the steps where two or more agents could run;
an advisor must also see the steps where one could (the trainer's two writes
after the reader finished are still the trainer's two writes). So the steps
are taken from the execution itself, as a monitor that watches every step:
the search attaches it beside the specifications, and the engine knows
nothing of advisors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from dnsse.advisor.step import Step

if TYPE_CHECKING:
    from dnsse.engine.agent import Agent
    from dnsse.engine.bugs import Bug
    from dnsse.engine.execution import Execution
    from dnsse.engine.operation import Operation


class StepLog:
    """The steps of the latest execution it watched, each with its position in the history."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.positions: list[int] = []

    def attach(self, execution: Execution) -> Callable[[], Bug | None]:
        steps: list[Step] = []
        positions: list[int] = []
        self.steps, self.positions = steps, positions

        def observe(agent: Agent, operation: Operation) -> None:
            if execution.aborted:
                return
            where = execution.describe(agent).where
            steps.append(
                Step(
                    agent.name,
                    operation.kind,
                    tuple((name, access.value) for name, access in operation.objects),
                    where or None,
                )
            )
            # Observers run once the step joined the history.
            positions.append(len(execution.history) - 1)

        execution.step_observers.append(observe)
        return lambda: None
