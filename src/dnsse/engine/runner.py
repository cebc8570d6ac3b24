"""Run a target once under control: (target, choices) -> result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

from dnsse.engine.bugs import Bug
from dnsse.engine.choices import Choice, Chooser, ChoiceKind
from dnsse.engine.execution import Event, Execution, Limits
from dnsse.engine.isolation import fresh_working_directory, seed_random_generators
from dnsse.engine.operation import Operation
from dnsse.engine.target import LoadedTarget
from dnsse.frameworks.base import Framework

SEED_OPTIONS = 2**31


class Monitor(Protocol):
    """Something that watches executions, e.g. the LTL specifications (dnsse.spec)."""

    def attach(self, execution: Execution) -> Callable[[], Bug | None]:
        """Subscribe to ``execution``; the function returned judges it once it completed."""
        ...


@dataclass
class ExecutionResult:
    bug: Bug | None
    choices: list[Choice]
    inputs: dict[str, object]
    steps: int
    elapsed_s: float
    divergence: str | None = None
    events: list[Event] = field(default_factory=list)
    history: list[tuple[int, Operation]] = field(default_factory=list)
    agent_names: list[str] = field(default_factory=list)
    # For dependency analysis (DPOR): the step during which each agent was
    # created, and the operation each unfinished agent was stopped at.
    created_at: list[int] = field(default_factory=list)
    pending: dict[int, Operation] = field(default_factory=dict)


def run_execution(
    target: LoadedTarget,
    framework: Framework,
    chooser: Chooser,
    limits: Limits = Limits(),
    inputs: dict[str, object] | None = None,
    trace_hook: Callable[[Callable | None], Callable] | None = None,
    monitors: Sequence[Monitor] = (),
) -> ExecutionResult:
    """Run ``target`` once; the framework's APIs must already be active.

    ``trace_hook`` composes a trace function into every agent's thread (see
    ``Execution.trace_hook``); branch coverage uses it. ``monitors`` watch
    the run (they may stop it with a bug) and judge it when it completed.
    """
    execution = Execution(chooser, limits, target.source_files)
    execution.trace_hook = trace_hook
    verdicts = [monitor.attach(execution) for monitor in monitors]
    seed = execution.chooser.next_value(ChoiceKind.SEED, SEED_OPTIONS)
    if inputs is None:
        inputs = {parameter.name: parameter.default for parameter in framework.inputs(target)}
    with fresh_working_directory():
        seed_random_generators(seed)
        framework.start(execution, target, inputs)
        execution.run()
        if execution.bug is None and execution.divergence is None:
            bug = framework.finish(execution)
            if bug is not None:
                execution.report_after_run(bug)
        for verdict in verdicts:
            if execution.bug is not None or execution.divergence is not None or not execution.completed:
                break
            bug = verdict()
            if bug is not None:
                execution.report_after_run(bug)
    return ExecutionResult(
        bug=execution.bug,
        choices=execution.chooser.choices,
        inputs=dict(inputs),
        steps=execution.step,
        elapsed_s=execution.elapsed_s,
        divergence=execution.divergence,
        events=execution.events,
        history=execution.history,
        agent_names=[agent.name for agent in execution.agents],
        created_at=execution.created_at,
        pending={agent.id: agent.pending for agent in execution.agents if not agent.done},
    )
