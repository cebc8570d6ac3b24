"""The flight recorder: what the running execution did, readable after its process died.

A target may kill the process that runs it (a segfault, ``os._exit``, a
fatal signal, the kernel's out-of-memory killer). Nothing can run in that
process afterwards, so each execution writes, as it goes, into a file mapped
in memory: the execution's number, every choice made so far, and the agent
chosen at the last step with its operation. Writes to a shared mapping land
in the page cache at once, so they survive the process; the supervising
process reads the file after the death and turns it into a ``crash`` bug with
a trace that replays it (see :mod:`dnsse.campaign.supervisor`).

The cost is a few bytes written per choice and per step, no system call.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from dnsse.engine.choices import Choice, ChoiceKind, Chooser

if TYPE_CHECKING:
    from dnsse.engine.agent import Agent
    from dnsse.engine.bugs import Bug
    from dnsse.engine.execution import Execution
    from dnsse.engine.operation import Operation

MAGIC = b"DNFR"
# magic, executing, execution number, choices recorded, overflowed, step
_HEADER = struct.Struct("<4sBqiBq")
_COUNT = struct.Struct("<i")
_STEP = struct.Struct("<q")
_COUNT_AT, _OVERFLOW_AT, _STEP_AT = 13, 17, 18
_POINT_SIZE = 512  # "agent\0operation" of the last step
_KINDS_SIZE = 1024  # choice kind names, one a line, in code order
# Options and answers take 64 bits: an input choice among the floats of a range has ~2**64 options.
_CHOICE = struct.Struct("<BQQ")
_CHOICE_LIMIT = 2**64
_CHOICES_AT = _HEADER.size + _POINT_SIZE + _KINDS_SIZE


@dataclass
class FlightRecord:
    """What the recorder held when its process died."""

    executing: bool
    execution: int
    choices: list[Choice]
    complete: bool  # False when the execution made more choices than the file holds
    step: int
    agent: str | None
    operation: str | None


class FlightRecorder:
    """Records the running execution into ``path``; room for ``capacity`` choices."""

    def __init__(self, path: Path, capacity: int) -> None:
        self.path = Path(path)
        self.capacity = capacity
        size = _CHOICES_AT + capacity * _CHOICE.size
        with open(self.path, "w+b") as stream:
            stream.truncate(size)
            self._map = mmap.mmap(stream.fileno(), size)
        # Kind names get codes as they first appear; the names are written beside the choices.
        self._kinds: dict[str, int] = {}
        self._count = 0
        self._full = False
        self._execution = 0
        self._write_header(False, 0)

    def begin(self, execution: int) -> None:
        """Execution number ``execution`` starts: forget the last one's choices."""
        self._count = 0
        self._full = False
        self._execution = execution
        self._write_header(True, 0)

    def end(self) -> None:
        """The execution ended inside the process (whatever its outcome)."""
        self._write_header(False, 0)

    def wrap(self, chooser: Chooser) -> Chooser:
        return _RecordingTo(self, chooser)

    def attach(self, execution: Execution) -> Callable[[], Bug | None]:
        """A monitor (see dnsse.engine.runner.Monitor): note the agent chosen at each step."""
        execution.step_observers.append(self._step)
        return lambda: None

    def close(self) -> None:
        self._map.close()

    def _step(self, agent: Agent, operation: Operation) -> None:
        text = f"{agent.name}\0{operation.kind}".encode("utf-8", "replace")[: _POINT_SIZE - 1]
        at = _HEADER.size
        self._map[at : at + len(text) + 1] = text + b"\0"
        _STEP.pack_into(self._map, _STEP_AT, agent.execution.step)

    def record(self, kind: str, options: int, index: int) -> None:
        if self._full or self._count >= self.capacity or options >= _CHOICE_LIMIT:
            # The record stops at its first gap: a crash trace could not replay past it.
            self._map[_OVERFLOW_AT] = 1
            self._full = True
            return
        _CHOICE.pack_into(self._map, _CHOICES_AT + self._count * _CHOICE.size, self._kind_code(kind), options, index)
        self._count += 1
        _COUNT.pack_into(self._map, _COUNT_AT, self._count)

    def _kind_code(self, kind: str) -> int:
        code = self._kinds.get(kind)
        if code is None:
            code = self._kinds[kind] = len(self._kinds)
            names = "\n".join(self._kinds).encode()[: _KINDS_SIZE - 1]
            at = _HEADER.size + _POINT_SIZE
            self._map[at : at + len(names) + 1] = names + b"\0"
        return code

    def _write_header(self, executing: bool, step: int) -> None:
        _HEADER.pack_into(self._map, 0, MAGIC, int(executing), self._execution, self._count, 0, step)
        self._map[_HEADER.size : _HEADER.size + 1] = b"\0"


class _RecordingTo:
    """A chooser that writes each answer of ``inner`` to the recorder."""

    __slots__ = ("recorder", "inner")

    def __init__(self, recorder: FlightRecorder, inner: Chooser) -> None:
        self.recorder = recorder
        self.inner = inner

    def __getattr__(self, name: str) -> object:
        # wants_operations, input_value, ...: whatever else the inner chooser offers.
        return getattr(self.inner, name)

    def next_agent(self, runnable: Sequence[int], current: int | None, step: int) -> int:
        index = self.inner.next_agent(runnable, current, step)
        self.recorder.record(ChoiceKind.AGENT, len(runnable), index)
        return index

    def next_agent_seeing(self, runnable: Sequence[int], current: int | None, step: int, *rest: object) -> int:
        index = self.inner.next_agent_seeing(runnable, current, step, *rest)  # type: ignore[attr-defined]
        self.recorder.record(ChoiceKind.AGENT, len(runnable), index)
        return index

    def next_value(self, kind: str, options: int, *asker: object) -> int:
        # ``asker`` comes only when the inner chooser wants it (``wants_asker``, passed on above).
        index = self.inner.next_value(kind, options, *asker)  # type: ignore[call-arg]
        self.recorder.record(kind, options, index)
        return index


def read_flight_record(path: Path) -> FlightRecord | None:
    """The record in ``path``, or ``None`` when there is none (the process died before writing one)."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    if len(data) < _CHOICES_AT or data[:4] != MAGIC:
        return None
    _, executing, execution, count, overflowed, step = _HEADER.unpack_from(data, 0)
    point = data[_HEADER.size : _HEADER.size + _POINT_SIZE].split(b"\0")
    agent = point[0].decode("utf-8", "replace") or None
    operation = point[1].decode("utf-8", "replace") if len(point) > 1 and agent else None
    kinds = data[_HEADER.size + _POINT_SIZE : _CHOICES_AT].split(b"\0")[0].decode().split("\n")
    choices = []
    for number in range(count):
        code, options, index = _CHOICE.unpack_from(data, _CHOICES_AT + number * _CHOICE.size)
        choices.append(Choice(kinds[code], options, index))
    return FlightRecord(bool(executing), execution, choices, not overflowed, step, agent, operation)


# Set by the supervising process in the environment of the process it runs:
# the directory it shares with it (the record, the fault log, the trace template).
SUPERVISED_ENV = "DNSSE_SUPERVISED_DIR"
RECORD_FILE = "flight"
# The trace of a crash, less its choices and bug, written by the supervised process.
TEMPLATE_FILE = "trace-template.json"
_active: FlightRecorder | None = None


# A longer execution's crash gets no trace (the record says it overflowed): 340 MB of record at most.
MAX_RECORDED_CHOICES = 20_000_000


def recorder_capacity(max_steps: int) -> int:
    """Room for every choice of an execution of at most ``max_steps`` steps (agent and value choices)."""
    return min(2 * max_steps + 1_000, MAX_RECORDED_CHOICES)


def supervised_directory() -> Path | None:
    """The directory shared with the supervising process; ``None`` when this process is not supervised."""
    directory = os.environ.get(SUPERVISED_ENV)
    return Path(directory) if directory else None


def install_recorder(capacity: int) -> FlightRecorder | None:
    """In a supervised process, the recorder every execution of this process writes to."""
    global _active
    directory = supervised_directory()
    if directory is not None and _active is None:
        _active = FlightRecorder(directory / RECORD_FILE, capacity)
    return _active


def active_recorder() -> FlightRecorder | None:
    return _active
