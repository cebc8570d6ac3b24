"""Places in the program under test, written the way the user launched it."""

from __future__ import annotations

import functools
import os
from types import CodeType, FrameType

# Executions run in fresh temporary directories; paths in reports are made
# relative to where dnsse was started, which is where the user is.
LAUNCH_DIRECTORY = os.getcwd()


# Asked at every collective and message of a torch program (its call site): a few files, asked often.
@functools.lru_cache(maxsize=1024)
def short_path(path: str) -> str:
    """``path`` relative to the launch directory when it lies below it, else as it is."""
    relative = os.path.relpath(path, LAUNCH_DIRECTORY)
    return path if relative.startswith("..") else relative


def frame_location(frame: FrameType) -> str:
    return f"{short_path(frame.f_code.co_filename)}:{frame.f_lineno}"


# File name -> its base name, for source_line: asked at every scheduling choice.
_base_names: dict[str, str] = {}


def source_line(frame: FrameType) -> str:
    """``file.py:LINE`` by file name only: the same wherever the program is run from."""
    filename = frame.f_code.co_filename
    base = _base_names.get(filename)
    if base is None:
        base = _base_names[filename] = os.path.basename(filename)
    return f"{base}:{frame.f_lineno}"


# id(code) -> the code (kept, so that no other code takes its id while it is here) and its lines by lasti.
_lines: dict[int, tuple[CodeType, dict[int, int | None]]] = {}
_LINES_KEPT = 4096
_UNKNOWN = object()


def line_at(code: CodeType, lasti: int) -> int | None:
    """The line of a frame of ``code`` stopped at ``lasti`` (its ``f_lasti``): what its ``f_lineno`` said then.

    A frame's ``f_lineno`` scans the code's line table from its start (3 us
    for a long function here); a choice keeps ``f_lasti`` instead, and the
    line is looked up once per code and instruction.
    """
    entry = _lines.get(id(code))
    if entry is None or entry[0] is not code:
        if len(_lines) >= _LINES_KEPT:
            _lines.clear()
        entry = _lines[id(code)] = (code, {})
    known = entry[1]
    line = known.get(lasti, _UNKNOWN)
    if line is _UNKNOWN:
        line = known[lasti] = _line_of(code, lasti)
    return line  # type: ignore[return-value]


def _line_of(code: CodeType, lasti: int) -> int | None:
    # As CPython's PyCode_Addr2Line: before the first instruction, the first line; None where no line is.
    if lasti < 0:
        return code.co_firstlineno
    for start, end, line in code.co_lines():
        if start <= lasti < end:
            return line
    return None


def source_line_at(code: CodeType, lasti: int) -> str:
    """:func:`source_line` of a frame of ``code`` that was stopped at ``lasti``."""
    filename = code.co_filename
    base = _base_names.get(filename)
    if base is None:
        base = _base_names[filename] = os.path.basename(filename)
    return f"{base}:{line_at(code, lasti)}"
