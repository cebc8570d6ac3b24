"""Line arcs of the target's own frames, and branch coverage from them.

coverage.py cannot follow dnsse's agents: they are started with ``_thread``
(no ``threading.settrace``), and the threads framework installs its own
``sys.settrace`` tracer in them. So the arcs are recorded here, by a light
trace function that the engine installs in every agent (see
``Execution.trace_hook``) and that chains to the framework's tracer when
there is one. It records arcs exactly as coverage.py's Python tracer does
(``(-first_line, line)`` on entry, ``(line, -first_line)`` on a real return),
and coverage.py's own static analysis gives the possible branch arcs, so the
numbers are coverage.py's ``--branch`` numbers for the same executions.

Only frames of the given files are traced line by line; every other frame
costs one call of the global trace function.
"""

from __future__ import annotations

import contextlib
import dis
import functools
import os
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator


TraceFunction = Callable[[types.FrameType, str, object], object]
Arc = tuple[int, int]

_RESUME = dis.opmap["RESUME"]
_PUSH_EXC_INFO = dis.opmap["PUSH_EXC_INFO"]


@dataclass(frozen=True)
class BranchCoverage:
    """Branch coverage of one file, as ``coverage report --branch`` counts it."""

    branches_total: int
    branches_covered: int

    @property
    def percent(self) -> float:
        if self.branches_total == 0:
            return 100.0
        return round(100.0 * self.branches_covered / self.branches_total, 1)

    @property
    def shown(self) -> str:
        """The percentage as people read it: a file with no branches has no coverage to speak of."""
        return "n/a" if self.branches_total == 0 else f"{self.percent}%"

    def as_json(self) -> dict:
        return {
            "branches_total": self.branches_total,
            "branches_covered": self.branches_covered,
            "percent": self.percent,
        }


class ArcRecorder:
    """Collects the arcs that executions take through ``files``, across a whole campaign."""

    def __init__(self, files: Iterable[str]) -> None:
        self.arcs: dict[str, set[Arc]] = {str(path): set() for path in files}

    def compose(self, inner: TraceFunction | None) -> TraceFunction:
        """A global trace function that records arcs and otherwise behaves as ``inner``."""
        recorded = self.arcs

        def global_trace(frame: types.FrameType, event: str, arg: object) -> object:
            inner_local = inner(frame, event, arg) if inner is not None else None
            arcs = recorded.get(frame.f_code.co_filename)
            if arcs is None:
                return inner_local
            return _frame_tracer(frame, arcs, inner_local)

        return global_trace

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        """While one execution runs (a trace function needs no set-up; the ``sys.monitoring`` recorder does)."""
        yield

    def coverage(self) -> BranchCoverage:
        """Branch coverage over every file, summed."""
        total = covered = 0
        for path, arcs in self.arcs.items():
            one = branch_coverage(path, arcs)
            total += one.branches_total
            covered += one.branches_covered
        return BranchCoverage(total, covered)


def arcs_as_json(recorder: ArcRecorder | None) -> dict[str, list[list[int]]]:
    """The arcs ``recorder`` holds, as JSON for a saved campaign (none without a recorder)."""
    if recorder is None:
        return {}
    return {path: sorted([list(arc) for arc in arcs]) for path, arcs in recorder.arcs.items()}


def restore_arcs(recorder: ArcRecorder | None, saved: dict) -> None:
    """Add arcs saved by :func:`arcs_as_json` to ``recorder``; ValueError, TypeError or AttributeError when damaged."""
    if recorder is None:
        return
    for path, arcs in saved.items():
        recorder.arcs.setdefault(str(path), set()).update((int(a), int(b)) for a, b in arcs)


def _frame_tracer(frame: types.FrameType, arcs: set[Arc], inner_local: object) -> TraceFunction:
    code = frame.f_code
    first = code.co_firstlineno
    # A "call" event also fires when a generator or coroutine resumes; only a
    # real call enters from the function's first line (RESUME's oparg is 0).
    real_call = code.co_code[frame.f_lasti + 1] == 0
    last = -first if real_call else frame.f_lineno
    frame.f_trace_lines = True
    chained = inner_local

    def local_trace(frame: types.FrameType, event: str, arg: object) -> TraceFunction:
        nonlocal last, chained
        if event == "line":
            # coverage.py ignores the line event of an exception handler's entry.
            if frame.f_code.co_code[frame.f_lasti] != _PUSH_EXC_INFO:
                line = frame.f_lineno
                arcs.add((last, line))
                last = line
        elif event == "return":
            lasti = frame.f_lasti
            co_code = frame.f_code.co_code
            # A return that is followed by RESUME is a yield, not the frame's end.
            if len(co_code) == lasti + 2 or co_code[lasti + 2] != _RESUME:
                arcs.add((last, -first))
        if chained is not None:
            chained = chained(frame, event, arg)  # type: ignore[operator]
        return local_trace

    return local_trace


def branch_coverage(path: str | Path, executed: Iterable[Arc]) -> BranchCoverage:
    """Branches of ``path`` and how many of them the ``executed`` arcs took."""
    # Keyed by modification time too: a file edited during a long process is parsed again.
    analysis = _static_analysis(str(path), os.stat(path).st_mtime_ns)
    possible, exit_counts, no_branch, translate = analysis
    branch_lines = {line for line, count in exit_counts.items() if count > 1}
    total = sum(exit_counts[line] for line in branch_lines)
    taken = _normalize(executed, possible, translate)
    missing = sum(
        1
        for arc in possible
        if arc not in taken and arc[0] in branch_lines and arc[0] not in no_branch
    )
    return BranchCoverage(total, total - missing)


def taken_branches(path: str | Path, executed: Iterable[Arc]) -> set[Arc]:
    """The branch arcs of ``path`` among the raw ``executed`` arcs (normalized as coverage.py does)."""
    possible, exit_counts, no_branch, translate = _static_analysis(str(path), os.stat(path).st_mtime_ns)
    return {
        arc
        for arc in _normalize(executed, possible, translate)
        if arc in possible and exit_counts.get(arc[0], 0) > 1 and arc[0] not in no_branch
    }


def _normalize(executed: Iterable[Arc], possible: set[Arc], translate: Callable[[Iterable[Arc]], set[Arc]]) -> set[Arc]:
    """coverage.py's reduction of raw arcs (results.analysis_from_file_reporter)."""
    destinations: dict[int, set[int]] = {}
    for start, end in possible:
        destinations.setdefault(start, set()).add(end)
    single = {start: next(iter(ends)) for start, ends in destinations.items() if len(ends) == 1}
    arcs = set()
    for start, end in translate(executed):
        if start != end:
            arcs.add((start, end))
        elif start in single:
            arcs.add((start, single[start]))
    return translate(arcs)


@functools.lru_cache(maxsize=64)
def _static_analysis(path: str, mtime_ns: int) -> tuple[set[Arc], dict[int, int], set[int], Callable[[Iterable[Arc]], set[Arc]]]:
    # coverage.py only once a coverage figure is wanted: importing it costs a campaign without one ~50 ms.
    from coverage.config import DEFAULT_EXCLUDE, DEFAULT_PARTIAL, DEFAULT_PARTIAL_ALWAYS
    from coverage.misc import join_regex
    from coverage.parser import PythonParser

    parser = PythonParser(filename=path, exclude=join_regex(DEFAULT_EXCLUDE))
    parser.parse_source()
    no_branch = parser.lines_matching(join_regex(DEFAULT_PARTIAL + DEFAULT_PARTIAL_ALWAYS))
    return parser.arcs(), parser.exit_counts(), no_branch, parser.translate_arcs

