"""Shared-state points through ``sys.monitoring`` (CPython 3.12 and 3.13).

The same points as the 3.11 opcode tracer of :mod:`shared_state` (the same
plan, the same handlers), reached another way. ``sys.settrace``'s opcode
events serve badly there: asked for in a frame's call event, as 3.11 allows,
they arrive only once a line event asks again, and 3.12.1 still misses whole
frames (a thread's first calls; so on 3.12 ``DNSSE_TRACER=settrace`` does
not apply to these points). ``sys.monitoring`` is also much cheaper (see the
README's Speed section): an ``INSTRUCTION`` event at an offset that is no point returns
``DISABLE`` and never fires again, so after the first pass over a function
only its points call back, where the opcode tracer is called before every
opcode of every traced frame, points or not.

Monitoring is per interpreter, not per thread: a code object of the program
is instrumented once (found by a ``PY_START`` event, which is disabled for
every code object once it has been seen), and each callback asks whether
its thread is an agent inside :func:`traced` (a thread-local, which the
greenlet host would swap with the rest of the thread's state). One plan is
active at a time; another plan (another campaign in the same process)
withdraws the instrumentation and re-enables what was disabled, since its
points may lie elsewhere.
"""

from __future__ import annotations

import _thread
import contextlib
import sys
import types
from typing import Iterator

from dnsse.engine import monitoring_tools
from dnsse.engine.agent import ThreadAgent
from dnsse.engine.operation import Operation

# Bound once: callbacks may still fire while the interpreter tears module globals down.
_monitoring = getattr(sys, "monitoring", None)
_DISABLE = getattr(_monitoring, "DISABLE", None)
_getframe = sys._getframe
_local = _thread._local()
# 3.12.1's settrace opcode events miss whole frames (a thread's first calls), so it always takes this way.
_SETTRACE_OPCODES_WORK = sys.version_info >= (3, 13)
_tool: int | None = None
_plan: object = None
_instrumented: list[types.CodeType] = []


def available() -> bool:
    """Whether shared-state points can come from ``sys.monitoring`` in this process."""
    global _tool
    tool = monitoring_tools.claim(
        "dnsse shared state",
        {"PY_START": _on_start, "INSTRUCTION": _on_instruction},
        settrace_works=_SETTRACE_OPCODES_WORK,
    )
    if tool is None:
        return False
    _tool = tool  # kept when sys.monitoring is set aside later: its callbacks stay registered
    return True


class _Active:
    """What the callbacks need of the agent running in this thread."""

    __slots__ = ("agent", "execution", "names", "yield_point")

    def __init__(self, agent: ThreadAgent) -> None:
        self.agent = agent
        self.execution = agent.execution
        self.names = agent.execution.object_names
        self.yield_point = agent.execution.yield_point


@contextlib.contextmanager
def traced(agent: ThreadAgent, plan: object) -> Iterator[None]:
    """The calling thread's agent gets shared-state points while the block runs."""
    _use(plan)
    previous = getattr(_local, "active", None)
    _local.active = _Active(agent)
    try:
        yield
    finally:
        _local.active = previous


def _use(plan: object) -> None:
    global _plan
    if plan is _plan:
        return
    monitoring = _monitoring
    for code in _instrumented:
        monitoring.set_local_events(_tool, code, 0)
    _instrumented.clear()
    _plan = plan
    # What the previous plan disabled (code seen, offsets that were no points) may matter to this one.
    monitoring.restart_events()
    monitoring.set_events(_tool, monitoring.events.PY_START)


def _on_start(code: types.CodeType, offset: int) -> object:
    plan = _plan
    if plan is None:
        return _DISABLE
    if plan.table_for(code):  # type: ignore[attr-defined]
        _monitoring.set_local_events(_tool, code, _monitoring.events.INSTRUCTION)  # type: ignore[union-attr]
        _instrumented.append(code)
    return _DISABLE


def _on_instruction(code: types.CodeType, offset: int) -> object:
    table = _plan.tables.get(id(code)) if _plan is not None else None  # type: ignore[attr-defined]
    point = table.get(offset) if table else None
    if point is None:
        return _DISABLE
    active = getattr(_local, "active", None)
    if active is None:
        return None  # not an agent's thread, or not inside traced(): another thread may need this point
    execution = active.execution
    if execution.scheduling:
        return None
    touched, unseen = point.handler(_getframe(1), active.names)
    if unseen is not None:
        execution.distrust(f"{point.where}: {unseen}")
    if touched:
        active.yield_point(active.agent, Operation(point.kind, touched, point.where))
    return None
