"""``os._exit`` in a Ray worker: the worker's process dies, not the job.

Ray's fault-tolerance documentation kills workers this way on purpose
(``os._exit(0)`` in an actor method or a task) to show restarts and
retries. Here every worker is an agent of one process, so the real
``os._exit`` would end the whole execution and read as a crash of the
program. While a Ray program runs, ``os._exit`` called by a task or an
actor (a method, a coroutine, the constructor) loses that worker as a crash
does: the actor restarts while ``max_restarts`` allows, its call is retried
while ``max_task_retries`` allows, and a task is retried while
``max_retries`` allows, else fails with ``WorkerCrashedError``. Called by
the driver, or by a thread a worker started, it is the real one.
"""

from __future__ import annotations

import contextlib
import os
from typing import Iterator, NoReturn

from dnsse.engine.execution import current_agent
from dnsse.frameworks.ray.runtime import Worker, WorkerCrash

_real_exit = os._exit


def _worker_exit(status: int) -> NoReturn:
    agent = current_agent()
    runtime = agent.execution.framework_state.get("ray") if agent is not None else None
    worker = agent.handle if runtime is not None else None
    if isinstance(worker, Worker) and worker is not runtime.driver:
        actor = worker.actor
        if actor is not None:
            actor.process_exited(f"its worker process exited (os._exit({status}))")
        raise WorkerCrash()
    _real_exit(status)


@contextlib.contextmanager
def worker_exits() -> Iterator[None]:
    """``os._exit`` ends only the calling worker while a Ray program runs (see the module's docstring)."""
    os._exit = _worker_exit
    try:
        yield
    finally:
        os._exit = _real_exit
