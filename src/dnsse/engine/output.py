"""The program's own prints, captured per execution and per agent.

A campaign runs a program thousands of times, and minimization runs it again;
if its prints reached the terminal they would bury the report. During an
execution ``sys.stdout`` and ``sys.stderr`` are replaced by writers that
record each write with the agent that made it, so that the bug's run can be
shown afterwards, rank by rank. Writes that bypass ``sys.stdout`` (C code
writing to file descriptor 1, a child process) are not captured.

What finalizers print while the cyclic garbage collector runs belongs to no
execution: the garbage may be any earlier execution's (an asyncio future
whose exception nobody retrieved logs "Future exception was never
retrieved" when it is collected), and the collector runs when allocations
say so, between executions or in the middle of another one. Once a process
has captured an execution's output, such writes are discarded, so they
reach neither the terminal nor the output of the run they happened in.
"""

from __future__ import annotations

import contextlib
import gc
import io
import sys
from dataclasses import dataclass, field
from typing import Iterator, TextIO

from dnsse.engine.execution import current_agent

# Beyond this many characters per execution the rest is counted, not kept:
# a program that prints in a loop must not exhaust memory over a campaign.
MAX_CHARS = 200_000

# Writes made outside any agent (the scheduler's thread, module import by dnsse).
NO_AGENT = "-"


@dataclass
class OutputChunk:
    """Consecutive text one agent wrote to one stream (``stdout`` or ``stderr``)."""

    agent: str
    stream: str
    text: str

    def to_json(self) -> dict:
        return {"agent": self.agent, "stream": self.stream, "text": self.text}


@dataclass
class CapturedOutput:
    chunks: list[OutputChunk] = field(default_factory=list)
    kept_chars: int = 0
    dropped_chars: int = 0

    def append(self, agent: str, stream: str, text: str) -> None:
        kept = self.kept_chars
        if kept >= MAX_CHARS:
            self.dropped_chars += len(text)
            return
        if kept + len(text) > MAX_CHARS:
            self.dropped_chars += kept + len(text) - MAX_CHARS
            text = text[: MAX_CHARS - kept]
        last = self.chunks[-1] if self.chunks else None
        if last is not None and last.agent == agent and last.stream == stream:
            last.text += text
        else:
            self.chunks.append(OutputChunk(agent, stream, text))
        self.kept_chars += len(text)

    def lines(self) -> list[tuple[str, str, str]]:
        """Every line as (agent, stream, text), in the order written."""
        result = []
        for chunk in self.chunks:
            for line in chunk.text.splitlines():
                result.append((chunk.agent, chunk.stream, line))
        return result


class _AgentWriter(io.TextIOBase):
    """Stands in for ``sys.stdout`` or ``sys.stderr`` while an execution runs.

    A logging handler created during the run keeps a reference to it; once the
    execution is over the writer passes such late writes to the real stream.
    """

    def __init__(self, stream: str, sink: CapturedOutput, original: TextIO) -> None:
        super().__init__()
        self._stream = stream
        self._sink = sink
        self._original = original
        self.active = True

    def write(self, text: str) -> int:
        if _collecting:
            return len(text)  # a finalizer's: see the module's docstring
        if not self.active:
            return self._original.write(text)
        agent = current_agent()
        self._sink.append(agent.name if agent is not None else NO_AGENT, self._stream, str(text))
        return len(text)

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._original, "encoding", "utf-8") or "utf-8"


class _Discarded(io.TextIOBase):
    """Where ``sys.stdout`` and ``sys.stderr`` point while the collector runs finalizers."""

    def write(self, text: str) -> int:
        return len(text)

    def writable(self) -> bool:
        return True


_DISCARDED = _Discarded()
_collecting = False
# The streams the collector's run replaced, put back when it stops.
_streams_before_collection: tuple[TextIO, TextIO] | None = None


def _during_collection(phase: str, info: dict) -> None:
    """A ``gc.callbacks`` entry: streams discarded from the start of a collection to its end."""
    global _collecting, _streams_before_collection
    if phase == "start":
        _collecting = True
        _streams_before_collection = (sys.stdout, sys.stderr)
        sys.stdout = sys.stderr = _DISCARDED
    elif _streams_before_collection is not None:
        sys.stdout, sys.stderr = _streams_before_collection
        _streams_before_collection = None
        _collecting = False


def discard_finalizer_output() -> None:
    """From now on, what finalizers print during a garbage collection is discarded (idempotent)."""
    if _during_collection not in gc.callbacks:
        gc.callbacks.append(_during_collection)


@contextlib.contextmanager
def captured_output(enabled: bool = True) -> Iterator[CapturedOutput]:
    """Record what the program prints while the block runs (nothing when not ``enabled``)."""
    sink = CapturedOutput()
    if not enabled:
        yield sink
        return
    discard_finalizer_output()
    original_out, original_err = sys.stdout, sys.stderr
    out = _AgentWriter("stdout", sink, original_out)
    err = _AgentWriter("stderr", sink, original_err)
    sys.stdout, sys.stderr = out, err
    try:
        yield sink
    finally:
        out.active = err.active = False
        sys.stdout, sys.stderr = original_out, original_err
