"""What a run can show: the bug record shared by engine, frameworks and reports."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
# Thread names of executors count executors process-wide: ThreadPoolExecutor-3_0.
_POOL_NUMBER = re.compile(r"(ThreadPoolExecutor)-\d+_")


class BugKind:
    DEADLOCK = "deadlock"
    EXCEPTION = "exception"
    COLLECTIVE_MISMATCH = "collective_mismatch"
    SPEC_VIOLATION = "spec_violation"
    TIMEOUT = "timeout"
    # The program killed or aborted its process (a signal, os._exit, memory exhausted).
    CRASH = "crash"
    # An agent blocked in a call outside control past the wall-clock limit, no other agent able to run.
    HANG = "hang"
    # A buffer read or written by two streams (or a stream and the host) with no ordering between them.
    RACE = "race"

    ALL = (DEADLOCK, EXCEPTION, COLLECTIVE_MISMATCH, SPEC_VIOLATION, TIMEOUT, CRASH, HANG, RACE)


@dataclass
class Bug:
    """A bug seen in one execution.

    ``message`` is one line; ``details`` holds the lines a person reads next
    (who waits for what, tracebacks, both call sites of a mismatch).
    """

    kind: str
    message: str
    details: list[str] = field(default_factory=list)
    agent: str | None = None
    step: int | None = None

    def signature(self) -> tuple[str, str]:
        """What makes two bugs the same bug, for deduplication across executions and replays.

        Addresses in reprs (``<Node object at 0x7f...>``) differ from run to run.
        """
        return (self.kind, _POOL_NUMBER.sub(r"\1-N_", _ADDRESS.sub("0x...", self.message)))

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "message": self.message,
            "details": list(self.details),
            "agent": self.agent,
            "step": self.step,
        }

    @staticmethod
    def from_json(raw: dict) -> Bug:
        return Bug(
            kind=str(raw["kind"]),
            message=str(raw["message"]),
            details=[str(line) for line in raw.get("details", [])],
            agent=raw.get("agent"),
            step=raw.get("step"),
        )

    def render(self) -> str:
        where = f" in {self.agent}" if self.agent else ""
        at = f" at step {self.step}" if self.step is not None else ""
        lines = [f"{self.kind}{where}{at}: {self.message}"]
        lines.extend("  " + line for detail in self.details for line in detail.splitlines())
        return "\n".join(lines)
