"""Tool ids of ``sys.monitoring`` (CPython 3.12+), claimed once per process.

``sys.monitoring`` lets six tools watch one interpreter at once, each under
an id of its own; ids 0, 1, 2 and 5 are the ones a debugger, coverage.py, a
profiler and an optimizer are asked to use. dnsse takes free ids, the
unassigned ones first, so pytest-cov or a debugger running dnsse keeps its own.
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import Callable

_PREFERENCE = (3, 4, 2, 0, 5, 1)
_claimed: dict[str, int | None] = {}
BACKEND_VARIABLE = "DNSSE_TRACER"


def usable(settrace_works: bool = True) -> bool:
    """Whether this interpreter has ``sys.monitoring`` and nothing asked for ``sys.settrace`` instead.

    ``DNSSE_TRACER=settrace`` is not heard where settrace cannot do the work (``settrace_works``).
    """
    if not (sys.implementation.name == "cpython" and hasattr(sys, "monitoring")):
        return False
    return not settrace_works or os.environ.get(BACKEND_VARIABLE, "").strip().lower() != "settrace"


def claim(
    name: str, callbacks: dict[str, Callable[..., object]], events: tuple[str, ...] = (), settrace_works: bool = True
) -> int | None:
    """The tool id of ``name``, claimed with its ``callbacks`` and global ``events`` (by event name) on the first call.

    ``None`` where ``sys.monitoring`` is not to be used (:func:`usable`) or all six ids are taken.
    """
    if not usable(settrace_works):
        return None
    if name in _claimed:
        return _claimed[name]
    monitoring = sys.monitoring  # type: ignore[attr-defined]
    found = next((tool for tool in _PREFERENCE if monitoring.get_tool(tool) is None), None)
    _claimed[name] = found
    if found is not None:
        monitoring.use_tool_id(found, name)
        atexit.register(_release, found)
        for event, callback in callbacks.items():
            monitoring.register_callback(found, getattr(monitoring.events, event), callback)
        monitoring.set_events(found, sum(getattr(monitoring.events, event) for event in events))
    return found


def _release(tool: int) -> None:
    """Let go before the interpreter tears down the modules the callbacks use."""
    monitoring = sys.monitoring  # type: ignore[attr-defined]
    monitoring.set_events(tool, 0)
    for name in dir(monitoring.events):
        event = getattr(monitoring.events, name)
        if name.isupper() and isinstance(event, int) and event and event & (event - 1) == 0:
            monitoring.register_callback(tool, event, None)
    monitoring.free_tool_id(tool)
