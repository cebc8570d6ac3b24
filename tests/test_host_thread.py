"""An OS thread that hosted one execution's greenlet agents hosts the next one as a new thread would.

The host thread is kept between executions (starting and ending one cost
more than a small execution's points); nothing an execution left in it may
reach the next: thread-locals, asyncio's running loop, a tracer.
"""

from __future__ import annotations

import _thread
import asyncio
import sys
import threading

import pytest

from dnsse.engine import host_thread
from dnsse.engine.agent import ThreadAgent
from dnsse.engine.choices import FirstChooser
from dnsse.engine.execution import Execution, Limits, current_agent
from dnsse.engine.greenlet_host import agents_share_a_thread
from dnsse.engine.operation import Operation

pytestmark = pytest.mark.skipif(not agents_share_a_thread(True), reason="agents cannot share an OS thread here")

# Made outside control, as a library's module-level local would be.
library_local = threading.local()
low_level_local = _thread._local()


def run_agents(*bodies: object) -> Execution:
    execution = Execution(FirstChooser(), Limits(max_seconds=60))
    execution.greenlets_allowed = True
    for index, body in enumerate(bodies):
        def wrapped(body: object = body) -> None:
            execution.yield_point(current_agent(), Operation("step"))  # type: ignore[arg-type]
            body()  # type: ignore[operator]

        ThreadAgent(execution, f"agent {index}", wrapped)
    execution.run()
    assert execution.completed and execution.bug is None
    return execution


def test_the_next_execution_starts_in_the_same_os_thread_as_in_a_new_one() -> None:
    host_thread._idle.clear()
    seen: dict[str, object] = {}

    async def running() -> object:
        return asyncio.get_running_loop()

    def leave_state_behind() -> None:
        seen["first ident"] = _thread.get_ident()
        library_local.value = "first execution"
        low_level_local.value = "first execution"
        seen["loop"] = asyncio.run(running())
        sys.settrace(lambda frame, event, arg: None)
        sys.setprofile(lambda frame, event, arg: None)

    def look() -> None:
        seen["second ident"] = _thread.get_ident()
        seen["library local"] = getattr(library_local, "value", None)
        seen["low-level local"] = getattr(low_level_local, "value", None)
        seen["running loop"] = asyncio.events._get_running_loop()
        seen["tracer"] = sys.gettrace()
        seen["profiler"] = sys.getprofile()

    run_agents(leave_state_behind)
    run_agents(look)
    assert seen["first ident"] == seen["second ident"], "the host thread was not kept"
    assert seen["loop"] is not None
    assert seen["library local"] is None and seen["low-level local"] is None
    assert seen["running loop"] is None
    assert seen["tracer"] is None and seen["profiler"] is None


def test_an_asyncio_program_after_another_gets_a_loop_of_its_own() -> None:
    loops = []

    async def main() -> None:
        loops.append(asyncio.get_running_loop())
        await asyncio.sleep(0)

    for _ in range(3):
        run_agents(lambda: asyncio.run(main()), lambda: asyncio.run(main()))
    assert len({id(loop) for loop in loops}) == len(loops) == 6
