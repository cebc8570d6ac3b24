"""The frame an OS thread stands at, read without CPython 3.11's deadlock in ``sys._current_frames``.

dnsse reads other threads' frames whenever it says where an agent stands: a
deadlock's report, a run past its time limit. CPython 3.11's
``sys._current_frames()`` holds the runtime's lock of thread states while it
makes a frame object for each thread. An allocation there may start a
garbage collection, whose finalisers may let go of the GIL; a thread that
takes the GIL then and wants the same lock (a thread starting or ending, as
agents' threads do) waits for it, while the reader waits for the GIL:
neither moves again, and the whole campaign hangs (CPython gh-106883, whose
fix was not backported to 3.11). With the collector held off while the
frames are read, no finaliser runs there.
"""

from __future__ import annotations

import gc
import sys
from types import FrameType


def frame_of_thread(ident: int) -> FrameType | None:
    """The innermost frame of the OS thread ``ident``; ``None`` when it is not running Python."""
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    try:
        return sys._current_frames().get(ident)
    finally:
        if collecting:
            gc.enable()
