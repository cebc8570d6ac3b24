"""What the strategies of parallel workers counted, added up for the report.

Each worker process (or Ray task) sends, with its reports, its strategy's
counts so far: the notes (pct: spinning agents dropped), the per-engine lines
of fuzz, symbolic and hybrid, and the advisors' calls and hints. They are
counts over that process's executions only, so the latest of each process
replaces its earlier ones, and the processes' add up: a worker replaced
after a death, and each Ray task, is a process of its own here. An engine's
``bugs`` counts the distinct bugs each process saw, so a bug two workers
both found counts twice there (the campaign's own list has it once).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dnsse.advisor.stats import merge_stats_json


@dataclass
class WorkerTotals:
    # By process (or task): its latest counts.
    _notes: dict[object, dict[str, int]] = field(default_factory=dict)
    _engines: dict[object, dict[str, dict]] = field(default_factory=dict)
    _advisor: dict[object, dict[str, dict]] = field(default_factory=dict)

    def update(self, process: object, message: dict) -> None:
        """The counts a report of ``process`` carries (``notes``, ``engines``, ``advisor``; each may be absent)."""
        if message.get("notes"):
            self._notes[process] = message["notes"]
        if message.get("engines"):
            self._engines[process] = message["engines"]
        if message.get("advisor"):
            self._advisor[process] = message["advisor"]

    def notes(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for counts in self._notes.values():
            for name, count in counts.items():
                total[name] = total.get(name, 0) + count
        return total

    def engines(self) -> dict[str, dict] | None:
        """Per engine: executions, new coverage and bugs added up; the earliest first bug."""
        if not self._engines:
            return None
        total: dict[str, dict] = {}
        for report in self._engines.values():
            for name, counts in report.items():
                into = total.setdefault(name, {})
                for key, value in counts.items():
                    if key == "first_bug_execution":
                        earlier = into.get(key)
                        into[key] = value if earlier is None or (value is not None and value < earlier) else earlier
                    else:
                        into[key] = into.get(key, 0) + value
        return total

    def advisor(self) -> dict[str, dict] | None:
        """Per advisor (offline, model): its counts added up over the processes that asked it."""
        if not self._advisor:
            return None
        by_name: dict[str, list[dict]] = {}
        for report in self._advisor.values():
            for name, record in report.items():
                by_name.setdefault(name, []).append(record)
        return {name: merge_stats_json(records) for name, records in by_name.items()}
