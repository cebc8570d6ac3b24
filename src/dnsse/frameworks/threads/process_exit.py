"""The end of a program's process: its exit callbacks and its executors' idle workers, then non-daemon threads.

When the main thread of a real program ends, CPython's ``threading._shutdown``
calls the callbacks registered with ``threading._register_atexit``, newest
first, and only then joins the threads that are not daemons. The oldest of
them is ``concurrent.futures``' own: it wakes every worker of every
``ThreadPoolExecutor`` with the order to stop once its queued work is done,
and joins them. So an executor that the program never shut down (a module's
executor, one made outside ``with``) does not keep a real process alive;
without the same end, dnsse saw its idle workers wait forever and reported
a deadlock in a program that exits cleanly.

Under control a process ends the same way when its entry point has
returned (or called ``sys.exit`` with status 0): the main agent of a
threads program, each rank of a torch program (a rank is a process of its
own). It runs, as controlled code, the callbacks that the agents of its
process registered, newest first, then stops its executors' workers as
``concurrent.futures`` does (the executor marked shut down, a stop order
queued, each worker joined), so every wake-up and join is a scheduling
step. A thread that still does not end is a real hang, reported as one.

Which process registered a callback or started a worker is asked of the
framework (``ThreadsRuntime.process_of``: one process for a threads
program, the rank an agent acts for in a torch program); ``concurrent.futures``'
table of workers is fresh in each execution, so no execution stops or
joins another's workers.
"""

from __future__ import annotations

import concurrent.futures.thread as executor_threads
import contextlib
import threading
import weakref
from typing import TYPE_CHECKING, Any, Callable, Hashable, Iterator

from dnsse.engine.execution import current_agent
from dnsse.frameworks.threads.runtime import runtime_for

if TYPE_CHECKING:
    from dnsse.engine.execution import Execution

_real_register = threading._register_atexit  # type: ignore[attr-defined]


class WorkerQueues(weakref.WeakKeyDictionary):
    """``concurrent.futures``' table of worker thread -> work queue, knowing the process that started each."""

    def __init__(self, process_of: Callable[[], Hashable]) -> None:
        super().__init__()
        self.process_of = process_of
        self.process: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def __setitem__(self, thread: Any, work_queue: Any) -> None:
        self.process[thread] = self.process_of()
        super().__setitem__(thread, work_queue)

    def of_process(self, process: Hashable) -> list[tuple[Any, Any]]:
        return [(thread, work_queue) for thread, work_queue in list(self.items()) if self.process.get(thread) == process]


class ProcessExit:
    """One process's exit callbacks, and whether it has begun to end."""

    def __init__(self, process: Hashable) -> None:
        self.process = process
        self.callbacks: list[Callable[[], Any]] = []
        self.ending = False

    def register(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        if self.ending:
            raise RuntimeError("can't register atexit after shutdown")  # CPython's own words
        self.callbacks.append(lambda: function(*args, **kwargs))

    def end(self) -> None:
        """What the main thread of a real process does at its end, before it joins non-daemon threads."""
        self.ending = True
        for callback in reversed(self.callbacks):
            callback()
        self._stop_executor_workers()

    def _stop_executor_workers(self) -> None:
        queues = executor_threads._threads_queues  # type: ignore[attr-defined]
        workers = queues.of_process(self.process) if isinstance(queues, WorkerQueues) else []
        for thread, work_queue in workers:
            # The worker's first argument is a weak reference to its executor.
            executor = thread._args[0]() if getattr(thread, "_args", None) else None
            if executor is not None:
                executor._shutdown = True
            work_queue.put(None)
        for thread, _ in workers:
            thread.join()


def end_of_process(execution: Execution) -> None:
    """The calling agent's process ends: see the module docstring."""
    process_exit_of(execution, runtime_for(execution).process_of()).end()


def process_exit_of(execution: Execution, process: Hashable) -> ProcessExit:
    exits = runtime_for(execution).process_exits
    if process not in exits:
        exits[process] = ProcessExit(process)
    return exits[process]


def fresh_executor_registry(execution: Execution) -> None:
    """A table of executor workers for ``execution`` alone, which knows each worker's process."""
    executor_threads._threads_queues = WorkerQueues(runtime_for(execution).process_of)  # type: ignore[attr-defined]


def _register(function: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    agent = current_agent()
    if agent is None:
        _real_register(function, *args, **kwargs)
    else:
        runtime = runtime_for(agent.execution)
        process_exit_of(agent.execution, runtime.process_of()).register(function, *args, **kwargs)


@contextlib.contextmanager
def controlled_process_exit() -> Iterator[None]:
    """While active, the exit callbacks that agents register belong to their process."""
    saved_queues = executor_threads._threads_queues  # type: ignore[attr-defined]
    threading._register_atexit = _register  # type: ignore[attr-defined]
    try:
        yield
    finally:
        threading._register_atexit = _real_register  # type: ignore[attr-defined]
        executor_threads._threads_queues = saved_queues  # type: ignore[attr-defined]
