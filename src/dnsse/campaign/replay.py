"""Replay: re-execute a recorded trace and say whether its bug comes back."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from dnsse.engine.choices import ReplayChooser, TraceDivergence
from dnsse.engine.determinism import Expected
from dnsse.engine.hash_seed import current_hash_seed
from dnsse.engine.flight import active_recorder
from dnsse.engine.runner import ExecutionResult, Monitor, run_execution
from dnsse.errors import BadInput, InconclusiveReplay, NotDeterministic
from dnsse.campaign.confirm import ADVICE, same_bug, unreproduced
from dnsse.campaign.relocation import locate
from dnsse.campaign.trace import Trace, read_trace
from dnsse.campaign.loading import load, pin_inputs, preflight
from dnsse.spec.sources import load_suite


@dataclass
class ReplayOutcome:
    trace: Trace
    result: ExecutionResult

    @property
    def reproduced(self) -> bool:
        bug = self.result.bug
        return bug is not None and same_bug(bug, self.trace.bug)


def replay(
    path: Path, monitors: Sequence[Monitor] = (), force: bool = False, root: Path | None = None
) -> ReplayOutcome:
    """Run the trace at ``path`` once; ``monitors`` watch the run besides the trace's specs.

    BadInput when the trace does not fit its program: it fits when the
    program is the one recorded (same source digest) and the run makes
    exactly the recorded choices, each choosing what it recorded, no fewer
    and no more. NotDeterministic when the recorded program went another way
    on them, or made them all and still did not show the recorded bug.
    With ``force`` a trace of another version of the program is run anyway:
    then, as for a trace that records no digest, a run that makes every
    recorded choice and passes is a pass. A trace without a digest is run
    with a warning on stderr that its fit cannot be checked. A trace recorded
    in another checkout replays its target found under ``root``, or under the
    project that holds the current directory or the trace
    (:mod:`dnsse.campaign.relocation`).
    """
    trace, moved = locate(read_trace(path), path, root)
    if moved is not None:
        sys.stderr.write(moved + "\n")
    target, framework = load(
        trace.target, trace.framework, trace.world_size, trace.faults, Path(trace.directory) if trace.directory else None
    )
    same_program = trace.source_sha256 == target.source_sha256
    if not trace.source_sha256:
        sys.stderr.write(
            f"dnsse: warning: the trace {path} records no source digest (an older dnsse wrote it), so dnsse "
            f"cannot check that it fits {target.spec.path} as it is now; if the program changed since, the "
            "replay may pass or diverge for that reason alone\n"
        )
    elif not same_program and not force:
        raise BadInput(
            f"the trace {path} no longer fits its program: {target.spec.path} changed since the trace was "
            "recorded (its source digest differs). Run `dnsse check` again to get a trace of this version, or "
            "replay it anyway with `dnsse replay --force`."
        )
    elif not same_program:
        sys.stderr.write(
            f"dnsse: warning: {target.spec.path} changed since the trace {path} was recorded; replaying it "
            "anyway (--force): a pass or a divergence may come from the change alone\n"
        )
    try:
        suite = load_suite(trace.specs)
    except BadInput as error:
        raise BadInput(f"the trace {path} holds a specification that does not parse: {error}") from None
    chooser = ReplayChooser(trace.choices)
    # In a supervised process, a replay that kills the process is told as a crash (dnsse.campaign.supervisor).
    flight = active_recorder()
    with framework.activate():
        preflight(target, framework)
        if flight is not None:
            flight.begin(trace.execution)
            monitors = [*monitors, flight]
        try:
            result = run_execution(
                target,
                framework,
                flight.wrap(chooser) if flight is not None else chooser,
                trace.limits,
                pinned=pin_inputs(
                    framework.inputs(target),
                    {name: _text(trace.inputs[name]) for name in trace.pinned if name in trace.inputs},
                ),
                monitors=([suite] if suite is not None else []) + list(monitors),
                expected=Expected(trace.choices),
            )
        except TraceDivergence as divergence:
            raise _does_not_fit(path, trace, str(divergence)) from None
        finally:
            if flight is not None:
                flight.end()
    if result.inconclusive is not None:
        raise InconclusiveReplay(
            f"replaying {path} ({trace.target}) was inconclusive, neither the recorded bug nor a pass: "
            f"{result.inconclusive.render()}\nIf the program is only slow there, check it again with a longer "
            "--execution-timeout; otherwise the call it stopped in is outside dnsse's control"
        )
    if result.divergence is not None:
        raise _does_not_fit(path, trace, result.divergence)
    # The same program made every recorded choice: the recorded bug must follow.
    why = unreproduced(trace, result) if trace.source_sha256 and same_program else None
    if why is not None:
        raise NotDeterministic(
            f"the program is not deterministic under control: replaying {path} ({trace.target}) {why}"
            f"{_seed_note(trace)}. {ADVICE}."
        )
    return ReplayOutcome(trace, result)


def _text(value: object) -> str:
    """A recorded input value as ``--input`` would give it."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def _does_not_fit(path: Path, trace: Trace, why: str) -> NotDeterministic:
    return NotDeterministic(
        f"the trace {path} no longer fits its program ({trace.target}): {why}{_seed_note(trace)}. "
        "Either the program changed since the trace was recorded, or it is not deterministic under control: "
        f"{ADVICE}. Run `dnsse check` again to get a new trace."
    )


def _seed_note(trace: Trace) -> str:
    """Why set orders may differ: the trace's hash seed is not this process's."""
    current = current_hash_seed()
    if trace.hash_seed is None or trace.hash_seed == current:
        return ""
    return (
        f" (the trace was recorded under PYTHONHASHSEED={trace.hash_seed}, this process runs under "
        f"{'a random one' if current is None else current}; `dnsse replay` sets it when run as a command)"
    )
