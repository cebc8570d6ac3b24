"""One step of one execution as an advisor names it: the word every other advisor module is built on."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Step:
    """One step of one execution: who did what, to which objects, where."""

    agent: str
    kind: str
    objects: tuple[tuple[str, str], ...]  # (object name, "read" | "write" | "sync")
    location: str | None

    def conflicts_with(self, other: Step) -> bool:
        return any(
            name == other_name and not (access == "read" and other_access == "read")
            for name, access in self.objects
            for other_name, other_access in other.objects
        )
