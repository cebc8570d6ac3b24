"""A worker process of a parallel campaign that died: the ``crash`` bug of the execution it was in.

Each worker writes its running execution into its own flight recorder file
(:mod:`dnsse.engine.flight`) and its Python stacks, on a fatal signal, into
its own fault log. When the worker dies, the parent reads both: a death
inside an execution is that execution's ``crash`` bug (the signal or exit
status, the agent that ran and its last scheduling point, the program's
frames), with the recorded choices as a trace that ``dnsse replay`` replays.
A death between executions (killed from outside) names no execution.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dnsse.engine.bugs import Bug
from dnsse.engine.flight import FlightRecord, read_flight_record
from dnsse.engine.runner import ExecutionResult
from dnsse.campaign.supervisor import ChildEnd, crash_bug, read_fault_lines

# A worker slot whose processes die this many times in a row without finishing an execution is given up.
MAX_DEATHS_WITHOUT_PROGRESS = 3


@dataclass
class WorkerFiles:
    """Where worker ``worker`` records its running execution and its fatal stacks."""

    flight: Path
    faults: Path

    @classmethod
    def of(cls, directory: Path, worker: int) -> WorkerFiles:
        return cls(directory / f"flight-{worker}", directory / f"faults-{worker}")


@dataclass
class Death:
    """How a worker process died, and in which execution if it was in one."""

    worker: int
    exitcode: int
    record: FlightRecord | None

    @property
    def index(self) -> int | None:
        """The index of the execution it died in; ``None`` when it died between executions."""
        if self.record is None or not self.record.executing:
            return None
        return self.record.execution - 1

    def crash(self, files: WorkerFiles, source: str) -> ExecutionResult:
        """The crashed execution as the campaign records it: its bug and recorded choices."""
        assert self.record is not None
        bug: Bug = crash_bug(ChildEnd(self.exitcode, self.record, None, False), read_fault_lines(files.faults, source))
        bug.details.insert(0, f"in worker process {self.worker} of the campaign")
        return ExecutionResult(bug=bug, choices=list(self.record.choices), inputs={}, steps=self.record.step, elapsed_s=0.0)

    def replayable(self) -> bool:
        """Whether the record holds every choice of the execution (else its trace could not replay it)."""
        return self.record is not None and self.record.complete


def death_of(worker: int, exitcode: int | None, files: WorkerFiles) -> Death:
    # A process that ended with no exit code known was killed by us or vanished: read it as SIGKILL.
    return Death(worker, exitcode if exitcode is not None else -9, read_flight_record(files.flight))


def death_message(death: Death) -> str:
    """Why a worker slot was given up: its processes died again and again outside any execution."""
    code = death.exitcode
    how = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
    return (
        f"worker process {death.worker} died {MAX_DEATHS_WITHOUT_PROGRESS} times ({how}) without finishing an "
        "execution, e.g. killed for memory or by the program itself while it loaded. Run the same command with "
        "--workers 1 to check the program in one process"
    )
