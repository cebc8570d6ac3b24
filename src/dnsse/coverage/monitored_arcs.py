"""The arcs of :class:`~dnsse.coverage.arcs.ArcRecorder`, recorded through ``sys.monitoring`` (3.12+).

The settrace recorder pays one call of its global trace function for every
Python call anywhere in an agent's thread (the controlled runtime's own,
the standard library's), because ``sys.settrace`` cannot be limited to some
files. ``sys.monitoring`` can: ``LINE``, ``PY_START``, ``PY_RESUME``,
``PY_RETURN`` and ``PY_YIELD`` events are set on the code objects of the
target's files only, and the one global event that finds them, ``PY_START``,
returns ``DISABLE`` for every other code object the first time it runs, so
code outside the target's files runs untouched.

What is recorded is what the settrace recorder records, event for event on
the same interpreter (the settrace line events of 3.12 and 3.13 are these
``LINE`` events): ``(-first_line, line)`` on a real call, the line a
generator resumes at, ``(line, -first_line)`` on a return or an exception
leaving the frame (``PY_UNWIND``), nothing at a yield, and no arc at an
exception handler's entry. The one difference is that the settrace line
event also fires again on a backward jump within one line, adding an arc
from a line to itself, which coverage.py's reduction drops (a line with a
single exit is no branch), so the branches counted are the same.

A line event cannot return ``DISABLE`` here: the arc into a line depends on
the line before it, so a line seen once may still arrive from elsewhere.
Only frames begun or resumed in an agent's thread (see :meth:`compose`)
while :meth:`recording` are followed, as only those are traced by settrace.
"""

from __future__ import annotations

import _thread
import contextlib
import dis
import sys
import types
from typing import Iterable, Iterator

from dnsse.coverage.arcs import ArcRecorder, TraceFunction
from dnsse.engine import monitoring_tools

_monitoring = getattr(sys, "monitoring", None)
_DISABLE = getattr(_monitoring, "DISABLE", None)
_getframe = sys._getframe
_get_ident = _thread.get_ident
_PUSH_EXC_INFO = dis.opmap["PUSH_EXC_INFO"]

_tool: int | None = None
# The recorder of the execution running now, and the files whose code is instrumented.
_active: MonitoredArcRecorder | None = None
_files: frozenset[str] = frozenset()
_instrumented: list[types.CodeType] = []
# By id: equal code objects (another load of the same file) are still distinct objects to instrument.
_instrumented_ids: set[int] = set()


def available() -> bool:
    """Whether arcs can be recorded through ``sys.monitoring`` in this process."""
    global _tool
    tool = monitoring_tools.claim(
        "dnsse coverage",
        {
            "PY_START": _on_start,
            "PY_RESUME": _on_resume,
            "PY_THROW": _on_throw,
            "PY_RETURN": _on_return,
            "PY_YIELD": _on_yield,
            "PY_UNWIND": _on_unwind,
            "LINE": _on_line,
        },
        events=("PY_START", "PY_UNWIND", "PY_THROW"),
    )
    if tool is None:
        return False
    _tool = tool  # kept when sys.monitoring is set aside later: its callbacks stay registered
    return True


class MonitoredArcRecorder(ArcRecorder):
    """An :class:`ArcRecorder` whose arcs come from ``sys.monitoring`` events."""

    def __init__(self, files: Iterable[str]) -> None:
        super().__init__(files)
        # The last line of each followed frame (negative: its first line, on a real call).
        self.frames: dict[types.FrameType, int] = {}
        self.threads: set[int] = set()

    def compose(self, inner: TraceFunction | None) -> TraceFunction | None:  # type: ignore[override]
        """Follow the frames the calling thread (an agent's) begins from now on; ``inner`` stays the trace function."""
        self.threads.add(_get_ident())
        return inner

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        global _active
        _instrument(frozenset(self.arcs))
        previous, _active = _active, self
        try:
            yield
        finally:
            _active = previous
            self.frames.clear()
            self.threads.clear()


def _instrument(files: frozenset[str]) -> None:
    """Make ``files`` the instrumented ones (once per campaign: every change re-instruments code)."""
    global _files
    if files == _files:
        return
    for code in _instrumented:
        _monitoring.set_local_events(_tool, code, 0)  # type: ignore[union-attr]
    _instrumented.clear()
    _instrumented_ids.clear()
    _files = files
    # PY_START was disabled for the code of files that were not instrumented then.
    _monitoring.restart_events()  # type: ignore[union-attr]


_LOCAL_EVENTS = 0
if _monitoring is not None:
    _events = _monitoring.events
    _LOCAL_EVENTS = _events.LINE | _events.PY_RESUME | _events.PY_RETURN | _events.PY_YIELD


def _on_start(code: types.CodeType, offset: int) -> object:
    if code.co_filename not in _files:
        return _DISABLE
    if id(code) not in _instrumented_ids:
        _monitoring.set_local_events(_tool, code, _LOCAL_EVENTS)  # type: ignore[union-attr]
        _instrumented.append(code)  # kept alive, so its id stays its own
        _instrumented_ids.add(id(code))
    recorder = _active
    if recorder is not None and _get_ident() in recorder.threads:
        recorder.frames[_getframe(1)] = -code.co_firstlineno
    return None


def _on_resume(code: types.CodeType, offset: int) -> object:
    recorder = _active
    if recorder is not None and _get_ident() in recorder.threads:
        frame = _getframe(1)
        recorder.frames[frame] = frame.f_lineno
    return None


def _on_throw(code: types.CodeType, offset: int, exception: BaseException) -> object:
    if code.co_filename in _files:
        _on_resume(code, offset)
    return None


def _on_line(code: types.CodeType, line: int) -> object:
    recorder = _active
    if recorder is None:
        return None
    frame = _getframe(1)
    frames = recorder.frames
    last = frames.get(frame)
    if last is None:
        return None
    # coverage.py ignores the line event of an exception handler's entry.
    if code.co_code[frame.f_lasti] == _PUSH_EXC_INFO:
        return None
    recorder.arcs[code.co_filename].add((last, line))
    frames[frame] = line
    return None


def _on_return(code: types.CodeType, offset: int, value: object) -> object:
    recorder = _active
    if recorder is not None:
        last = recorder.frames.pop(_getframe(1), None)
        if last is not None:
            recorder.arcs[code.co_filename].add((last, -code.co_firstlineno))
    return None


def _on_yield(code: types.CodeType, offset: int, value: object) -> object:
    recorder = _active
    if recorder is not None:
        recorder.frames.pop(_getframe(1), None)
    return None


def _on_unwind(code: types.CodeType, offset: int, exception: BaseException) -> object:
    if code.co_filename in _files:
        _on_return(code, offset, None)
    return None

