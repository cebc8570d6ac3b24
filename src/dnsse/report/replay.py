"""Replay: re-execute a recorded trace and say whether its bug comes back."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from dnsse.engine.choices import ReplayChooser
from dnsse.engine.runner import ExecutionResult, Monitor, run_execution
from dnsse.errors import BadInput
from dnsse.report.trace import Trace, read_trace
from dnsse.search.campaign import load, pin_inputs, preflight
from dnsse.spec.sources import load_suite


@dataclass
class ReplayOutcome:
    trace: Trace
    result: ExecutionResult

    @property
    def reproduced(self) -> bool:
        bug = self.result.bug
        return bug is not None and bug.signature() == self.trace.bug.signature()


def replay(path: Path, monitors: Sequence[Monitor] = ()) -> ReplayOutcome:
    """Run the trace at ``path`` once; ``monitors`` watch the run besides the trace's specs."""
    trace = read_trace(path)
    target, framework = load(trace.target, trace.framework, trace.world_size, trace.faults)
    try:
        suite = load_suite(trace.specs)
    except BadInput as error:
        raise BadInput(f"the trace {path} holds a specification that does not parse: {error}") from None
    with framework.activate():
        preflight(target, framework)
        result = run_execution(
            target,
            framework,
            ReplayChooser(trace.choices),
            trace.limits,
            pinned=pin_inputs(
                framework.inputs(target), {name: _text(trace.inputs[name]) for name in trace.pinned if name in trace.inputs}
            ),
            monitors=([suite] if suite is not None else []) + list(monitors),
        )
    if result.divergence is not None:
        raise BadInput(
            f"the trace {path} no longer fits its program ({trace.target}): {result.divergence}. "
            "The program changed since the trace was recorded, or it is not deterministic under control "
            "(it reads the clock or real randomness); run `dnsse check` again to get a new trace."
        )
    return ReplayOutcome(trace, result)


def _text(value: object) -> str:
    """A recorded input value as ``--input`` would give it."""
    return str(value).lower() if isinstance(value, bool) else str(value)
