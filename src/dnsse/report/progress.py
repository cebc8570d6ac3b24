"""The live progress line of a campaign, drawn with rich on a terminal only.

It is redrawn from the campaign's own callbacks (at most ten times a second),
never from a thread of its own: under the ``threads`` framework, threads
started during a campaign would be controlled ones.
"""

from __future__ import annotations

import sys
import time

from rich.console import Console
from rich.live import Live
from rich.text import Text

from dnsse.coverage.arcs import ArcRecorder

REDRAW_S = 0.1
# Branch coverage needs coverage.py's analysis of the file: not at every redraw.
COVERAGE_S = 1.0


class ProgressLine:
    """executions, executions/s, coverage, bugs, elapsed and time left, on the last line of the terminal."""

    def __init__(self, console: Console, budget: int | None, time_budget: float | None) -> None:
        self.budget = budget
        self.time_budget = time_budget
        self.executions = 0
        self.bugs = 0
        self.coverage: str | None = None
        # What the campaign does now: exploring, or minimizing and confirming a bug it found.
        self.phase = "exploring"
        self.started = time.perf_counter()
        self._drawn = 0.0
        self._measured = 0.0
        self._console = console
        self._live = Live(self._render(), console=console, auto_refresh=False, transient=True)
        self._live.start()

    @staticmethod
    def on_terminal(budget: int | None, time_budget: float | None, enabled: bool = True) -> ProgressLine | None:
        """A progress line when stdout is a terminal (and ``enabled``), else ``None``."""
        if not enabled or not sys.stdout.isatty():
            return None
        return ProgressLine(Console(file=sys.stdout), budget, time_budget)

    def update(self, executions: int, bug: bool, recorder: ArcRecorder | None) -> None:
        self.executions = max(self.executions, executions)
        now = time.perf_counter()
        if recorder is not None and now - self._measured >= COVERAGE_S:
            self._measured = now
            coverage = recorder.coverage()
            self.coverage = f"{coverage.branches_covered}/{coverage.branches_total} branches"
        if bug or now - self._drawn >= REDRAW_S:
            self._drawn = now
            self._live.update(self._render(), refresh=True)

    def show_phase(self, phase: str) -> None:
        """The campaign moved to ``phase``: redrawn at once (minimizing a bug may take a while)."""
        self.phase = phase
        self._drawn = time.perf_counter()
        self._live.update(self._render(), refresh=True)

    def print(self, text: str) -> None:
        """A line above the progress line (which stays at the bottom)."""
        self._live.console.print(Text(text), soft_wrap=True)

    def close(self) -> None:
        self._live.stop()

    def _render(self) -> Text:
        elapsed = time.perf_counter() - self.started
        rate = self.executions / elapsed if elapsed > 0 else 0.0
        parts = [
            f"{self.executions}" + (f"/{self.budget}" if self.budget is not None else "") + " executions",
            f"{rate:.0f}/s",
        ]
        if self.coverage is not None:
            parts.append(f"coverage {self.coverage}")
        parts.append(f"{self.bugs} bug{'s' if self.bugs != 1 else ''}")
        parts.append(f"elapsed {_duration(elapsed)}")
        left = self.time_left(elapsed, rate)
        if left is not None:
            parts.append(f"left {_duration(left)}")
        line = Text(f"dnsse {self.phase}: " + " · ".join(parts), style="bold" if self.bugs else "", no_wrap=True)
        # One line that fits the terminal, cut with an ellipsis: a wrapped line would leave copies behind.
        line.truncate(self._console.width, overflow="ellipsis")
        return line

    def time_left(self, elapsed: float, rate: float) -> float | None:
        """The sooner of the time budget's end and the budget's end at the current rate."""
        candidates = []
        if self.time_budget is not None:
            candidates.append(max(0.0, self.time_budget - elapsed))
        if self.budget is not None and rate > 0:
            candidates.append(max(0, self.budget - self.executions) / rate)
        return min(candidates) if candidates else None


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, seconds = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
