"""An execution that can say nothing: it hit the wall-clock limit in code dnsse does not control.

The step limit (a ``timeout`` bug) counts scheduling points, so a livelock
among controlled agents hits it. The wall-clock limit is hit when an agent
stops coming back to scheduling points at all: it blocks in a call dnsse
does not control (a read of a pipe, ``select``, a real OS lock), or computes
for longer than the limit. dnsse cannot tell a hang from a slow step there,
so such an execution is neither a bug nor a pass: it is inconclusive, and
the report says where each agent stood so the user can see which call
escaped control.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Inconclusive:
    """What an inconclusive execution shows: one line, then where each agent stood."""

    message: str
    details: list[str] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"message": self.message, "details": list(self.details)}

    @staticmethod
    def from_json(raw: dict) -> Inconclusive:
        return Inconclusive(str(raw["message"]), [str(line) for line in raw.get("details", [])])

    def render(self) -> str:
        return "\n".join([f"inconclusive: {self.message}", *("  " + line for line in self.details)])
