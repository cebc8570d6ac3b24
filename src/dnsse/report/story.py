"""The story of a bug: its recorded run, step by step, with the source line of each step.

A trace holds only choices. To tell a person what happened, the trace is run
once more with a step recorder: for every step, the agent, what it did, where
in the program it stood, and whether the scheduler switched away from an
agent that could have gone on (the preemptions a minimized schedule keeps are
the ones the bug needs). The terminal, the HTML page and SARIF all read a
:class:`Story`.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Callable, Sequence

from dnsse.engine.agent import Agent, StepAgent, ThreadAgent
from dnsse.engine.bugs import Bug
from dnsse.engine.choices import Chooser
from dnsse.engine.execution import Event, Execution
from dnsse.engine.location import LAUNCH_DIRECTORY, frame_location, short_path
from dnsse.engine.clock import format_delay
from dnsse.engine.object_names import number_of
from dnsse.engine.operation import Access, Operation, is_expiry
from dnsse.engine.output import CapturedOutput
from dnsse.report.program_names import ProgramNames
from dnsse.campaign.replay import replay
from dnsse.campaign.trace import Trace


@dataclass(frozen=True)
class Touch:
    """One object a step touched: the engine's ``name``, the program's ``label``, and its value.

    ``value`` is what a read saw, or what a write left (the value once the step ran); ``None`` where it is
    not known (a closure's cell, an object the program dropped).
    """

    name: str
    label: str
    access: str  # "read", "write"
    value: str | None = None


@dataclass
class StoryStep:
    """One step of the run: ``agent`` took it; ``lane`` is the agent it is shown under.

    An async transfer's steps are shown under the rank that issued it.
    ``switched_from`` names the agent that would have taken this step had
    the schedule not chosen otherwise (the current agent, or the first
    runnable one).
    """

    step: int
    agent: str
    lane: str
    operation: str
    detail: str
    location: str | None
    is_async: bool
    switched_from: str | None = None
    # What virtual time did at this step, in words: a timeout that expired, a sleep that ended,
    # the agents stalled so that a deadline came first (see dnsse.engine.clock).
    time_note: str | None = None
    # The engine's names of everything the step touched (memory, primitives, actors), for pairing steps.
    objects: tuple[str, ...] = ()
    # The program's objects (memory only) the step read or wrote, named as the program names them.
    touches: tuple[Touch, ...] = ()
    # The actor call (``Counter#1.get#3``) that this step submits, starts or ends.
    call: str | None = None
    # What that call was given and returned, in a few characters each, where known.
    call_arguments: str | None = None
    call_returned: str | None = None


@dataclass
class SourceLine:
    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass
class Story:
    trace: Trace
    trace_path: Path
    bug: Bug | None
    reproduced: bool
    lanes: list[str]
    steps: list[StoryStep]
    events: list[Event]
    output: CapturedOutput
    # Agents that finished before the run ended.
    finished_lanes: set[str] = field(default_factory=set)
    # The places the bug names (the failing call, both sides of a mismatch,
    # the frames of an exception), innermost last.
    bug_lines: list[SourceLine] = field(default_factory=list)

    @property
    def switches(self) -> int:
        return sum(1 for step in self.steps if step.switched_from is not None)

    def failing_lines(self) -> list[SourceLine]:
        """Where the run broke, first the most precise place: the raising line of an
        exception, else the failing step's line; then the other lines the bug names."""
        lines: list[SourceLine] = []
        if self.bug is not None and self.bug.kind == "exception":
            lines.extend(reversed(self.bug_lines))
        failing = self.failing_step()
        if failing is not None and failing.location is not None:
            path, _, line = failing.location.rpartition(":")
            lines.append(SourceLine(path, int(line)))
        lines.extend(self.bug_lines)
        unique: list[SourceLine] = []
        for line in lines:
            if line not in unique:
                unique.append(line)
        return unique

    def failing_step(self) -> StoryStep | None:
        """The step that broke the run: the bug's step in its agent's lane, else the lane's last."""
        bug = self.bug
        if bug is None or not self.steps:
            return None
        mine = [step for step in self.steps if bug.agent is None or step.lane == bug.agent or step.agent == bug.agent]
        candidates = [step for step in mine if bug.step is None or step.step <= bug.step] or mine
        return candidates[-1] if candidates else self.steps[-1]


class _StepRecorder:
    """A monitor that writes down every step of one execution; it never judges."""

    def __init__(self) -> None:
        self.steps: list[StoryStep] = []
        self.lanes: list[str] = []
        self._execution: Execution | None = None
        # step -> the agent that would have run there had the schedule not said otherwise
        self._instead_of: dict[int, str] = {}
        self._names: ProgramNames | None = None
        # The writes of the last step, whose values are known only once it ran: (index of the step, frame).
        self._unfinished: tuple[int, FrameType | None] | None = None
        # An actor call's label -> who submitted it and where (the caller's ``.remote()`` line).
        self._submitted: dict[str, tuple[str, str | None]] = {}

    def attach(self, execution: Execution) -> Callable[[], Bug | None]:
        self._execution = execution
        self._names = ProgramNames(execution.object_names)
        execution.chooser.inner = _DecisionWatcher(execution.chooser.inner, execution, self._instead_of)
        execution.step_observers.append(self._observe)
        return lambda: None

    def _observe(self, chosen: Agent, operation: Operation) -> None:
        execution = self._execution
        assert execution is not None
        self._finish_writes()
        lane = self._lane_of(chosen, execution)
        if lane not in self.lanes:
            self.lanes.append(lane)
        frame = _program_frame(chosen, execution.source_files)
        location = frame_location(frame) if frame is not None else None
        touches = self._touches(operation, frame)
        detail = describe(operation, touches)
        call = None
        if operation.kind == "actor.submit" and operation.detail in execution_labels(operation):
            call = operation.detail
            self._submitted[call] = (chosen.name, location)
            detail = f"calls {call}"
        elif operation.kind == "ray.submit":
            self._submitted[operation.detail] = (chosen.name, location)
        elif operation.kind in ("task.start", "task.end") and operation.detail in self._submitted:
            # A task runs the program's function, but starts and ends where its caller's .remote() stands.
            caller, submitted_at = self._submitted[operation.detail]
            location = location or submitted_at
            detail = f"{detail} (called by {caller})"
        elif operation.kind in ("actor.call", "actor.call.end") and operation.detail in self._submitted:
            call = operation.detail
            caller, location = self._submitted[call]
            detail = f"{call} {'runs' if operation.kind == 'actor.call' else 'returns'} (called by {caller})"
        self.steps.append(
            StoryStep(
                step=execution.step,
                agent=chosen.name,
                lane=lane,
                operation=operation.kind,
                detail=detail,
                location=location,
                is_async=isinstance(chosen, StepAgent),
                switched_from=self._instead_of.get(execution.step),
                time_note=time_note(chosen, operation, execution) if is_expiry(operation) else None,
                objects=tuple(name for name, _ in operation.objects),
                touches=touches,
                call=call,
            )
        )
        if any(touch.access == "write" for touch in touches):
            self._unfinished = (len(self.steps) - 1, frame)

    def _touches(self, operation: Operation, frame: FrameType | None) -> tuple[Touch, ...]:
        """What a memory step reads or writes, by the program's names, with the values read."""
        names = self._names
        if names is None or operation.kind.partition(".")[0] not in MEMORY_KINDS:
            return ()
        touched = [(name, access) for name, access in operation.objects if access in (Access.READ, Access.WRITE)]
        # An attribute's access also reads its owner as a whole (for dependence): the attribute says more.
        owners = {name.partition(".")[0] for name, _ in touched if "." in name and number_of(name) is not None}
        found = []
        for name, access in touched:
            if name in owners:
                continue
            value = names.value(name, frame) if access is Access.READ else None
            found.append(Touch(name, names.label(name, frame), access.value, value))
        return tuple(found)

    def finish(self) -> None:
        """Fill in what the run's last write left (called once the run is over)."""
        self._finish_writes()

    def _finish_writes(self) -> None:
        """The values the previous step's writes left: it has run by the time the next step is chosen."""
        if self._unfinished is None or self._names is None:
            return
        index, frame = self._unfinished
        self._unfinished = None
        step = self.steps[index]
        step.touches = tuple(
            Touch(touch.name, touch.label, touch.access, self._names.value(touch.name, frame))
            if touch.access == "write" else touch
            for touch in step.touches
        )
        step.detail = touches_text(step.touches)

    @staticmethod
    def _lane_of(agent: Agent, execution: Execution) -> str:
        """A step agent belongs to the thread agent whose name its own name extends."""
        if isinstance(agent, ThreadAgent):
            return agent.name
        owners = [a.name for a in execution.thread_agents() if agent.name.startswith(a.name + " ")]
        return max(owners, key=len) if owners else agent.name


def execution_labels(operation: Operation) -> tuple[str, ...]:
    """The actor call an ``actor.submit`` names (``Counter#1.get#3``); nothing for an actor's creation."""
    detail = operation.detail
    return (detail,) if "#" in detail.rpartition(".")[2] else ()


class _DecisionWatcher:
    """Passes the replayed answers through, noting each one that differs from the default.

    The default is what minimization scores against: the current agent goes
    on when it can, else the first runnable one. A minimized schedule keeps
    only the non-default answers the bug needs, so these are its story.
    """

    def __init__(self, inner: Chooser, execution: Execution, instead_of: dict[int, str]) -> None:
        self.inner = inner
        self._execution = execution
        self._instead_of = instead_of

    def next_agent(self, runnable: Sequence[int], current: int | None, step: int) -> int:
        index = self.inner.next_agent(runnable, current, step)
        default = runnable.index(current) if current in runnable else 0
        if index != default:
            self._instead_of[step] = self._execution.agents[runnable[default]].name
        return index

    def next_value(self, kind: str, options: int) -> int:
        return self.inner.next_value(kind, options)


def time_note(agent: Agent, operation: Operation, execution: Execution) -> str:
    """What a step that gave up a timed wait did with virtual time, in one sentence."""
    clock = execution.clock
    base = operation.kind[: -len(".timeout")]
    what = operation.detail.rpartition(" (timeout after ")[0] or operation.detail
    seconds = operation.detail.rpartition(" (timeout after ")[2].rstrip("s)") if "(timeout after " in operation.detail else ""
    stall = clock.stalls[-1] if clock.stalls and clock.stalls[-1].step == execution.step else None
    at = stall.until if stall is not None else clock.now
    if base == "sleep":
        happened = f"{agent.name}'s {what} ended at t={at:.6g}s"
    elif base == "asyncio.timer":
        happened = f"a timer of {what.partition(':')[0]} fired at t={at:.6g}s"
    else:
        timeout = f"{seconds}s " if seconds else ""
        happened = f"the {timeout}timeout of {base}" + (f" ({what})" if what else "") + f" expired at t={at:.6g}s"
    if stall is None:
        return happened
    return (
        f"the agents that could run were stalled {stall.seconds:.3g}s here (of the {format_delay(clock.max_delay)} "
        f"--max-delay), so {happened}"
    )


_LOCATION_ONLY = re.compile(r"[^\s]+:\d+")
_VERBS = {"load": "reads", "store": "writes", "delete": "deletes"}
# Operations that read or write the program's own objects (see dnsse.frameworks.threads.opcode_points).
MEMORY_KINDS = frozenset(
    ("attr", "item", "global", "cell", "truth", "contains", "iterate", "unpack", "merge", "format", "compare",
     "binary", "call")
)


def describe(operation: Operation, touches: Sequence[Touch] = ()) -> str:
    """What a step does, in words: the operation's own text, or its access to a named object."""
    if touches:
        return touches_text(touches)
    detail = operation.detail
    if detail and not _LOCATION_ONLY.fullmatch(detail):
        action = operation.kind.rpartition(".")[2].lower()
        return detail if action in detail.lower() else f"{operation.kind}: {detail}"
    verb = _VERBS.get(operation.kind.rpartition(".")[2])
    names = [name.partition(":")[2] or name for name, _ in operation.objects]
    if verb is not None and names:
        return f"{verb} {names[0]}"
    return operation.kind


def touches_text(touches: Sequence[Touch]) -> str:
    """``reads self.items of Box#1 = []``: what a memory step did, by the program's names."""
    return "; ".join(_access_text(touch) for touch in touches[:2]) + (", ..." if len(touches) > 2 else "")


def _access_text(touch: Touch) -> str:
    if touch.access == "read":
        return f"reads {touch.label}" + (f" = {touch.value}" if touch.value is not None else "")
    return f"writes {touch.label}" + (f" (now {touch.value})" if touch.value is not None else "")


def _program_frame(agent: Agent, source_files: frozenset[str]) -> FrameType | None:
    """The frame where ``agent`` stands in the program: its innermost frame in the program's files."""
    if not isinstance(agent, ThreadAgent):
        return None
    frame = agent.current_frame()
    while frame is not None:
        if frame.f_code.co_filename in source_files:
            return frame
        frame = frame.f_back
    return None


_PY_LOCATION = re.compile(r"([\w./\\-]+\.py):(\d+)")
_TRACEBACK_LOCATION = re.compile(r'File "([^"]+\.py)", line (\d+)')


def bug_source_lines(bug: Bug) -> list[SourceLine]:
    """The program lines a bug report names, in the order they appear, without repeats."""
    found: list[SourceLine] = []
    for text in [bug.message, *bug.details]:
        for match in [*_TRACEBACK_LOCATION.finditer(text), *_PY_LOCATION.finditer(text)]:
            path = short_path(match.group(1))
            line = SourceLine(path, int(match.group(2)))
            if line not in found and not _is_library(match.group(1)):
                found.append(line)
    return found


_NOT_THE_PROGRAM = (sys.prefix, sys.base_prefix, str(Path(__file__).resolve().parents[1]))


def _is_library(path: str) -> bool:
    """A frame of Python, an installed package or dnsse itself, not of the program under test."""
    return os.path.join(LAUNCH_DIRECTORY, path).startswith(_NOT_THE_PROGRAM)


def tell(trace_path: Path, force: bool = False, root: Path | None = None) -> Story:
    """Run the trace at ``trace_path`` once more, recording each step and the program's output.

    ``force``: run it even against a changed program; ``root``: the checkout to find its target in
    (see :func:`~dnsse.campaign.replay.replay`).
    """
    recorder = _StepRecorder()
    outcome = replay(trace_path, monitors=[recorder], force=force, root=root)
    recorder.finish()
    result = outcome.result
    bug = result.bug
    story = Story(
        trace=outcome.trace,
        trace_path=trace_path,
        bug=bug,
        reproduced=outcome.reproduced,
        lanes=_ordered_lanes(recorder.lanes, result.agent_names),
        steps=recorder.steps,
        events=result.events,
        output=result.output,
    )
    _add_call_values(story.steps, result.events)
    unfinished = {result.agent_names[agent] for agent in result.pending}
    story.finished_lanes = {lane for lane in story.lanes if lane in result.agent_names and lane not in unfinished}
    if bug is not None:
        story.bug_lines = bug_source_lines(bug)
    return story


def _add_call_values(steps: list[StoryStep], events: list[Event]) -> None:
    """Actor calls' arguments and return values, from the runtime's events, in the steps that made them."""
    arguments: dict[str, str] = {}
    returned: dict[str, str] = {}
    submits = [step for step in steps if step.operation == "actor.submit" and step.call is not None]
    for event in events:
        if event.name == "actor.call.submit" and "args" in event.fields:
            mine = [step for step in submits if step.agent == event.agent and step.step <= event.step]
            if mine and mine[-1].call is not None:
                arguments[mine[-1].call] = str(event.fields["args"])
        elif event.name == "actor.call.end" and "returned" in event.fields:
            returned[event.agent] = str(event.fields["returned"])
    for step in steps:
        if step.call is None:
            continue
        step.call_arguments = arguments.get(step.call)
        step.call_returned = returned.get(step.call)
        call = call_text(step.call, step.call_arguments, step.call_returned)
        if step.operation == "actor.submit":
            step.detail = f"calls {call}"
        else:
            step.detail = call + step.detail[len(step.call):]


def call_text(label: str, arguments: str | None, returned: str | None) -> str:
    """``Counter#1.set(1) -> None (call #5)``: an actor call as the program wrote it, with what it returned."""
    name, _, number = label.rpartition("#")
    if not name:
        return label
    text = f"{name}({(arguments or '(...)')[1:-1]})" if arguments is not None else name
    if returned is not None and returned != "None":
        text += f" -> {returned}"
    return f"{text} (call #{number})"


def _ordered_lanes(lanes: list[str], agent_names: list[str]) -> list[str]:
    """Lanes in the order their agents were created (rank 0 before rank 1, the driver first)."""
    order = {name: index for index, name in enumerate(agent_names)}
    return sorted(lanes, key=lambda lane: order.get(lane, len(order)))
