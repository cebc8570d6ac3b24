"""The program's own prints, captured per execution and per agent.

A campaign runs a program thousands of times, and minimization runs it again;
if its prints reached the terminal they would bury the report. During an
execution ``sys.stdout`` and ``sys.stderr`` are replaced by writers that
record each write with the agent that made it, so that the bug's run can be
shown afterwards, rank by rank. Writes that bypass ``sys.stdout`` (C code
writing to file descriptor 1, a child process) are not captured.
"""

from __future__ import annotations

import contextlib
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


@contextlib.contextmanager
def captured_output(enabled: bool = True) -> Iterator[CapturedOutput]:
    """Record what the program prints while the block runs (nothing when not ``enabled``)."""
    sink = CapturedOutput()
    if not enabled:
        yield sink
        return
    original_out, original_err = sys.stdout, sys.stderr
    out = _AgentWriter("stdout", sink, original_out)
    err = _AgentWriter("stderr", sink, original_err)
    sys.stdout, sys.stderr = out, err
    try:
        yield sink
    finally:
        out.active = err.active = False
        sys.stdout, sys.stderr = original_out, original_err
