"""Places in the program under test, written the way the user launched it."""

from __future__ import annotations

import functools
import os
from types import FrameType

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
