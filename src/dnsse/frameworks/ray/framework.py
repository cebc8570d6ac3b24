"""The ray framework: ``FUNC(**inputs)`` is the driver of a Ray program, under control.

The driver is an agent that runs a fresh copy of the target module, whose
``import ray`` gets the controlled runtime (:mod:`.api`); tasks, actor
constructors and actor calls are agents of their own, started as Ray would
start them (:mod:`.tasks`, :mod:`.actor_state`). ``faults=False`` (the
command line's ``--faults off``) never injects crashes.

An exception that escapes the driver is a bug; when it is a task's error
re-raised by ``ray.get``, the report carries both tracebacks, the driver's
and the task's. Errors inside tasks and actors are stored in their refs and
surface only where a ``get`` (or ``await``) reads them, as in Ray.

Events for specifications (actors are named ``Class#N``, tasks by function):

- ``task.submit`` (``task``, ``ref``), ``task.start`` and ``task.end``
  (``task``), ``task.retry`` (``task``);
- ``actor.create`` and ``actor.restart`` (``actor``) when a constructor
  finishes, ``actor.died`` (``actor``, ``restarting``), ``actor.kill``
  (``actor``), ``actor.crash`` and ``task.crash`` (``worker``) when a fault is
  injected;
- ``actor.call.submit`` (``actor``, ``method``, ``ref``, ``args``: the
  arguments in a few characters), ``actor.call.start``, ``actor.call.end``
  (also ``returned``: the value in a few characters, when it returned one)
  and ``actor.call.retry`` (``actor``, ``method``);
- ``ray.get`` (``ref``: the first ref's number, ``refs``: how many) when a
  get returns, ``ray.put`` (``ref``), ``ray.wait`` (``ready``: how many).
"""

from __future__ import annotations

import contextlib
import traceback
from typing import Iterator

from dnsse.engine.agent import ThreadAgent
from dnsse.engine.bugs import Bug, BugKind
from dnsse.engine.collector import fewer_collections
from dnsse.engine.main_module import run_as_main
from dnsse.engine.execution import Execution, ExecutionAborted
from dnsse.engine.target import InputParameter, LoadedTarget, require_no_positional_parameters
from dnsse.frameworks.ray.deadlock import explain_deadlock
from dnsse.frameworks.ray.errors import RayTaskError
from dnsse.frameworks.ray.modules import controlled_ray
from dnsse.frameworks.ray.runtime import RayRuntime, Worker, install_runtime
from dnsse.frameworks.ray.worker_exit import worker_exits
from dnsse.frameworks.threads.runtime import runtime_for
from dnsse.frameworks.threads.shared_state import plan_for


class RayFramework:
    name = "ray"
    # The controlled runtime keeps nothing per OS thread: its tasks, actors and loops are agents.
    agents_share_a_thread = True

    def __init__(self, faults: bool = True) -> None:
        self.faults = faults

    @contextlib.contextmanager
    def activate(self) -> Iterator[None]:
        # Each execution leaves hundreds of objects in cycles: see dnsse.engine.collector.
        with controlled_ray(), worker_exits(), fewer_collections():
            yield

    def inputs(self, target: LoadedTarget) -> list[InputParameter]:
        role = f"{target.spec}, the driver of a Ray program,"
        return target.entry_point_inputs(lambda function: require_no_positional_parameters(function, role))

    def start(self, execution: Execution, target: LoadedTarget, inputs: dict[str, object]) -> None:
        runtime = RayRuntime(execution, self.faults, plan_for(target), siblings=target.siblings)
        install_runtime(runtime)
        # When the driver returns the job ends: tasks, actors and their threads are stopped, not waited for.
        threads = runtime_for(execution)
        threads.is_job_worker = lambda agent: isinstance(agent.handle, Worker)
        threads.interrupt_of = runtime.interrupt_of
        execution.deadlock_explainers.append(lambda blocked: explain_deadlock(execution, blocked))

        def body() -> None:
            if target.launch is not None:
                # `python FILE.py`: the file's __main__ block is the driver.
                try:
                    run_as_main(target, lambda module: runtime.workers.set_program(module.__name__))
                except RayTaskError as error:
                    _fail_with_task_error(execution, error, driver.name)
                finally:
                    runtime.workers.close()
                return
            module = target.instantiate()
            runtime.workers.set_program(module.__name__)
            try:
                target.entry_point(module)(**target.localize(inputs, module))
            except RayTaskError as error:
                _fail_with_task_error(execution, error, driver.name)
            finally:
                runtime.workers.close()
                target.release(module)

        driver = ThreadAgent(execution, "driver", body)
        driver.handle = runtime.driver

    def finish(self, execution: Execution) -> Bug | None:
        return None


def _fail_with_task_error(execution: Execution, error: RayTaskError, driver: str) -> None:
    """Ray's own report: where the driver got a task's error, and where the task raised it."""
    execution.fail(Bug(
        BugKind.EXCEPTION,
        f"{type(error).__name__}: {error.summary()}",
        details=[
            _driver_traceback(error, execution.source_files),
            f"raised in {error.origin()}:\n{error.traceback_str}",
        ],
        agent=driver,
    ))
    raise ExecutionAborted() from None


def _driver_traceback(error: RayTaskError, source_files: frozenset[str]) -> str:
    """Where the driver got a task's error, from the program's first frame, ending in one line."""
    frames = traceback.extract_tb(error.__traceback__)
    mine = [i for i, frame in enumerate(frames) if frame.filename in source_files] or [0, len(frames) - 1]
    # The frames inside the controlled ray.get say nothing to the user.
    listing = "".join(traceback.format_list(frames[mine[0] : mine[-1] + 1]))
    return f"Traceback (most recent call last):\n{listing}{type(error).__name__}: {error.summary()}"
