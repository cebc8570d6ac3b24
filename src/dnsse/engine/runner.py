"""Run a target once under control: (target, choices) -> result."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

from dnsse.engine.bugs import Bug
from dnsse.engine.choices import Choice, Chooser, ChoiceKind, Chosen, RecordingChooser, TraceDivergence
from dnsse.engine.clock import Stall
from dnsse.engine.determinism import Expected
from dnsse.engine.execution import Event, Execution, ExecutionAborted, Limits
from dnsse.engine.imports import imports_in_one_piece
from dnsse.engine.inconclusive import Inconclusive
from dnsse.engine.inputs import InputSlot, draw_inputs, input_slots
from dnsse.engine.isolation import fresh_working_directory, isolated_execution
from dnsse.engine.memory import exhausted
from dnsse.engine.operation import Operation
from dnsse.engine.output import CapturedOutput, captured_output
from dnsse.engine.process_calls import process_calls_controlled
from dnsse.engine.rejection import cut_short, huge_input, rejected_as_too_large, rejected_before_first_step
from dnsse.engine.target import LoadedTarget
from dnsse.errors import BadInput, EngineFailure
from dnsse.frameworks.base import Framework

SEED_OPTIONS = 2**31
_SEEDING = Chosen("-", "seed")


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
    # Agents whose threads did not stop when the execution ended (spinning
    # outside every scheduling point): they keep running in this process.
    abandoned: list[str] = field(default_factory=list)
    # What the program printed, by agent (empty when output was not captured).
    output: CapturedOutput = field(default_factory=CapturedOutput)
    # What the execution added to the campaign's coverage (a
    # dnsse.coverage.feedback.Feedback), when a coverage-guided strategy runs.
    feedback: Any = None
    # What each input choice decides, in the order of the input choices.
    slots: list[InputSlot] = field(default_factory=list)
    # Why some step may have touched objects that its operation does not name.
    untrusted: str | None = None
    # Set when the wall-clock limit ended the run: neither a bug nor a pass.
    inconclusive: Inconclusive | None = None
    # Where the scheduler stalled the agents that could run so that a deadline came first (dnsse.engine.clock).
    stalls: list[Stall] = field(default_factory=list)
    # Why the program rejected this run's input (dnsse.engine.rejection): then ``bug`` is None.
    rejected: str | None = None


def _choices(result: ExecutionResult) -> list[Choice]:
    choices = result.__dict__["_choices"]
    if isinstance(choices, RecordingChooser):
        choices = result.__dict__["_choices"] = choices.choices
    return choices


def _set_choices(result: ExecutionResult, choices: list[Choice] | RecordingChooser) -> None:
    result.__dict__["_choices"] = choices


# Set on the class once the dataclass made its __init__, __eq__ and __repr__, which go through it:
# a result made from a run holds the run's recorder, and its scheduling choices are made Choices
# (dnsse.engine.choices.agent_choice) only when they are read; most executions of a random search
# never have them read.
ExecutionResult.choices = property(_choices, _set_choices)  # type: ignore[assignment]


def run_execution(
    target: LoadedTarget,
    framework: Framework,
    chooser: Chooser,
    limits: Limits = Limits(),
    pinned: dict[str, object] | None = None,
    trace_hook: Callable[[Callable | None], Callable] | None = None,
    monitors: Sequence[Monitor] = (),
    capture_output: bool = True,
    expected: Expected | None = None,
) -> ExecutionResult:
    """Run ``target`` once; the framework's APIs must already be active.

    Every explored input not in ``pinned`` takes its value from ``input``
    choices, right after the seed; a chooser with an ``input_value`` method
    (see :class:`~dnsse.engine.inputs.InputAware`) may hand the program a
    stand-in for each drawn value (concolic execution traces through it).
    ``trace_hook`` composes a trace function into every agent's thread (see
    ``Execution.trace_hook``); branch coverage uses it. ``monitors`` watch
    the run (they may stop it with a bug) and judge it when it completed.
    With ``capture_output`` the program's prints are kept in the result
    instead of reaching the terminal. ``expected`` is a trace the run must
    follow: a choice that differs from it ends the run with ``divergence``
    saying where and how.
    """
    execution = Execution(chooser, limits, target.source_files, expected)
    execution.trace_hook = trace_hook
    # torch's per-thread state (grad mode, inference mode, autocast) is not swapped between greenlets.
    execution.greenlets_allowed = (
        getattr(framework, "agents_share_a_thread", False) and not target.imports_torch and "torch" not in sys.modules
    )
    verdicts = [monitor.attach(execution) for monitor in monitors]
    with fresh_working_directory(), process_calls_controlled(), imports_in_one_piece():
        parameters = framework.inputs(target)
        try:
            seed = execution.chooser.next_value(ChoiceKind.SEED, SEED_OPTIONS, lambda: _SEEDING)
            inputs = draw_inputs(
                parameters, lambda options: execution.choose_value(ChoiceKind.INPUT, options), pinned
            )
        except TraceDivergence as divergence:
            execution.diverge(str(divergence))
            return ExecutionResult(None, execution.chooser, {}, 0, 0.0, divergence=execution.divergence)  # type: ignore[arg-type]
        except ExecutionAborted:
            return ExecutionResult(None, execution.chooser, {}, 0, 0.0, divergence=execution.divergence)  # type: ignore[arg-type]
        given = inputs
        stand_in = getattr(chooser, "input_value", None)
        if stand_in is not None:
            given = {
                p.name: stand_in(p, inputs[p.name]) if p.name not in (pinned or {}) else inputs[p.name]
                for p in parameters
            }
            given.update({k: v for k, v in inputs.items() if k not in given})
        with isolated_execution(seed), captured_output(capture_output) as output:
            huge = huge_input(parameters, inputs, pinned or {})
            if huge is not None:
                execution.limits = cut_short(limits)
            framework.start(execution, target, given)
            entry_agents = [agent.id for agent in execution.agents]
            execution.run()
            if execution.bug is None and execution.divergence is None and execution.inconclusive is None:
                bug = framework.finish(execution)
                if bug is not None:
                    execution.report_after_run(bug)
            for verdict in verdicts:
                if execution.bug is not None or execution.divergence is not None or not execution.completed:
                    break
                bug = verdict()
                if bug is not None:
                    execution.report_after_run(bug)
    if execution.failure is not None:
        raise EngineFailure.in_execution(execution.failure, execution.step)
    if execution.refusal is not None:
        raise BadInput(execution.refusal)
    rejection = (
        execution.rejection
        # Without an explored input there is no input to reject: an early exception is the program's bug.
        or (rejected_before_first_step(execution, entry_agents) if input_slots(parameters, pinned) else None)
        or rejected_as_too_large(execution, huge)
    )
    if rejection is not None:
        execution.bug = execution.inconclusive = None
    if execution.divergence is None and execution.inconclusive is None and execution.chooser.check is not None:
        unfitting = execution.chooser.check.at_end(len(execution.chooser.made))
        if unfitting is not None:
            execution.divergence = unfitting
    return ExecutionResult(
        # A failed allocation under the memory limit is the process's end, not the program's exception.
        bug=exhausted(execution.bug),
        choices=execution.chooser,  # type: ignore[arg-type]
        inputs=dict(inputs),
        steps=execution.step,
        elapsed_s=execution.elapsed_s,
        divergence=execution.divergence,
        events=execution.events,
        history=execution.history,
        agent_names=[agent.name for agent in execution.agents],
        created_at=execution.created_at,
        pending={agent.id: agent.pending for agent in execution.agents if not agent.done},
        abandoned=[agent.name for agent in execution.abandoned()],
        output=output,
        slots=input_slots(parameters, pinned),
        untrusted=execution.untrusted,
        inconclusive=execution.inconclusive,
        stalls=list(execution.clock.stalls),
        rejected=rejection,
    )
