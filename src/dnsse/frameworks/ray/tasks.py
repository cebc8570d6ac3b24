"""Remote functions: ``f.remote(...)`` runs ``f`` as a task, in an agent of its own.

A task agent starts only when the refs passed directly as its arguments are
ready (refs nested in containers are passed as refs, as in Ray). A task whose
dependency failed fails with that error, unrun. With ``max_retries`` declared
(Ray's default of 3 counts only when written out, so that undeclared faults
never appear), the worker may crash at any Ray call inside the task and when
it returns; the task then runs again from the start: at-least-once, with the
side effects of the lost attempt kept. ``retry_exceptions`` retries
application errors too.
"""

from __future__ import annotations

import inspect

from dataclasses import dataclass
from typing import Any, Callable

from dnsse.engine.agent import ThreadAgent, Wait
from dnsse.engine.operation import Access, Operation
from dnsse.frameworks.ray import options as opts
from dnsse.frameworks.ray.errors import TaskCancelledError, TaskPlacementGroupRemoved, WorkerCrashedError
from dnsse.frameworks.ray.placement_groups import BundlePlacement, placement_of
from dnsse.frameworks.ray.refs import (
    ObjectRef,
    describe_pending,
    failed_dependency,
    resolve,
    top_level_refs,
)
from dnsse.frameworks.ray.results import store_error, store_value, task_error
from dnsse.frameworks.ray.resources import demand_of
from dnsse.frameworks.ray.runtime import RayRuntime, Worker, WorkerCrash, controlled
from dnsse.frameworks.ray.serialization import copy_value, passed_by_name
from dnsse.frameworks.ray.shipping import Shipment
from dnsse.frameworks.ray.streaming import DYNAMIC, ObjectRefGenerator, is_streaming, produce, produce_all, yielded_returns
from dnsse.frameworks.ray.unmodelled import refuse_dag


# Shipped as a name, as Ray pickles a remote function's handle.
@passed_by_name
class RemoteFunction:
    """What ``@ray.remote`` makes of a function."""

    def __init__(self, function: Callable[..., Any], options: dict[str, Any], max_calls: int | None = None) -> None:
        self._function = function
        self._options = opts.checked(options, opts.TASK_OPTIONS, "a remote function")
        if max_calls is None:
            # As Ray: a function declaring GPUs gets a new worker process for every call, unless it says otherwise.
            declared = options.get("max_calls")
            max_calls = (1 if (options.get("num_gpus") or 0) > 0 else 0) if declared is None else opts.count(declared)
        self.max_calls = max_calls
        self.__name__ = getattr(function, "__name__", "task")
        self.__qualname__ = getattr(function, "__qualname__", self.__name__)
        self.__module__ = getattr(function, "__module__", None)
        self.__doc__ = getattr(function, "__doc__", None)
        self.__wrapped__ = function
        # What every call shares, worked out where the first call needs it: whether it streams and
        # how many refs it returns (see remote), its retries and resource demand (see _TaskRun).
        # Invalid options are not kept, so they fail every call, at the point where they always did.
        self._returns: tuple[bool, int] | None = None
        self._per_task: _PerTask | None = None

    def options(self, **options: Any) -> RemoteFunction:
        if "max_calls" in options:
            raise ValueError("Setting 'max_calls' is not supported in '.options()'.")
        return RemoteFunction(self._function, {**self._options, **options}, self.max_calls)

    def remote(self, *args: Any, **kwargs: Any) -> Any:
        agent, runtime = controlled(f"{self.__name__}.remote()")
        streaming, count = self._returns or self._returns_of_calls()
        runtime.checkpoint(agent)
        number = runtime.next_work_number()
        label = f"{self.__name__}#{number}"
        args, kwargs = copy_value(args), copy_value(kwargs)
        refs = [ObjectRef(runtime.next_ref_number(), label)] if count == 1 else [
            ObjectRef(runtime.next_ref_number(), label) for _ in range(count)
        ]
        shipment = runtime.shipment(self._function)
        runtime.execution.yield_point(agent, Operation("ray.submit", (), label))
        # A cancel that came meanwhile interrupts the submitter before its task exists.
        runtime.checkpoint(agent, faults=False)
        parent = runtime.worker_of(agent)
        run = _TaskRun(runtime, self, shipment, label, args, kwargs, refs, parent, streaming)
        parent.children.append(run.cancel)
        parent.related.append(run.worker)
        runtime.execution.emit(agent, "task.submit", {"task": self.__name__, "ref": refs[0].number if refs else None})
        if streaming:
            return run.stream
        if count == 1:
            return refs[0]  # num_returns unset, 1 or "dynamic": one ref, as Ray returns it
        return refs if refs else None

    def _returns_of_calls(self) -> tuple[bool, int]:
        streaming = is_streaming(self._options.get("num_returns"), self._function)
        count = 1 if streaming else opts.num_returns(self._options.get("num_returns"))
        returns = self._returns = (streaming, count)
        return returns

    def _per_task_of_calls(self) -> _PerTask:
        options = self._options
        retries = opts.retries(options.get("max_retries"))
        demand = demand_of(options, default_cpus=1)
        placed = any(name in options for name in _PLACEMENT_OPTIONS)
        per_task = self._per_task = _PerTask(retries, options.get("retry_exceptions", False), demand, placed)
        return per_task

    def bind(self, *args: Any, **kwargs: Any) -> Any:
        refuse_dag(self.__name__)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            f"Remote functions cannot be called directly. Instead of running '{self.__name__}()', "
            f"try '{self.__name__}.remote()'."
        )

    def __repr__(self) -> str:
        return f"<remote function {self.__qualname__}>"


# The options that may place a task in a placement group (see placement_of).
_PLACEMENT_OPTIONS = (
    "scheduling_strategy", "placement_group", "placement_group_bundle_index", "placement_group_capture_child_tasks"
)


@dataclass(frozen=True)
class _PerTask:
    """What every task of one remote function starts with, read from its options once."""

    retries: int
    retry_exceptions: object
    # Shared by its tasks, never changed: the pools keep it as each holder's demand.
    demand: dict[str, float]
    # Whether its options name a placement; without one a task runs where its parent's group sends it.
    placed: bool


def _no_crash() -> None:
    """A task worker's crash: nothing to undo, the attempt unwinds and is retried."""


class _TaskRun:
    """One submitted task: its agent, its attempts, its result."""

    def __init__(
        self, runtime: RayRuntime, remote: RemoteFunction, shipment: Shipment, label: str, args: tuple, kwargs: dict,
        refs: list[ObjectRef], parent: Worker, streaming: bool = False,
    ) -> None:
        self.runtime = runtime
        self.remote = remote
        self.shipment = shipment
        # A streaming task's one ref says when it finished; its values go to the stream.
        self.stream = ObjectRefGenerator(refs[0]) if streaming else None
        self.dynamic = remote._options.get("num_returns") == DYNAMIC
        self.label = label
        self.args = args
        self.kwargs = kwargs
        self.refs = refs
        options = remote._options
        per_task = remote._per_task or remote._per_task_of_calls()
        self.retries_left = per_task.retries
        self.retry_exceptions = per_task.retry_exceptions
        self.started = self.finished = False
        # Cancelled before it started (it never runs), or while running (interrupted).
        self.cancelled = self.interrupted = False
        # Its placement group was removed (see .placement_groups).
        self.evicted = False
        self.demand = per_task.demand
        # The cluster's pool, or the bundle of the placement group the task is placed in (checked first).
        parents_group, parent_captures = parent.placement()
        if per_task.placed or (parents_group is not None and parent_captures):
            self.pool = placement_of(runtime, options, self.demand, label, parent)
        else:
            self.pool = runtime.cluster  # what placement_of answers for options and a parent that name no group
        execution = runtime.execution
        agent = ThreadAgent(execution, label, self._body, daemon=True)
        self.worker = Worker(caller=label, label=label, crash=_no_crash if self.retries_left != 0 else None,
                             agent_id=agent.id)
        if isinstance(self.pool, BundlePlacement):
            self.worker.placement_group = self.pool.group
            self.worker.capture_child_tasks = self.pool.capture_child_tasks
            self.pool.group.on_removal.append(self._evict)
        agent.handle = self.worker
        for ref in refs:
            ref.canceller = self.cancel_from_program
        dependencies = self.dependencies = top_level_refs(args, kwargs)
        # Its results too: a task not yet started is what may fill them first. A search that stops the
        # job while the task still waits to start sees this as its last step, dependent with a
        # ray.wait or ray.get of them, so it tries the task going first (see dnsse.search.races).
        results = tuple([(ref.object_name, Access.WRITE) for ref in refs])
        agent.pending = Operation(
            "task.start", tuple([(ref.object_name, Access.READ) for ref in dependencies]) + results, label,
        )
        agent.waiting = Wait(self._may_start, self._why_waiting)
        self.agent = agent

    def _why_waiting(self) -> str:
        """For deadlock reports: what the task waits for to start."""
        if not all(ref.ready for ref in self.dependencies):
            return f"the arguments of {self.label}: {describe_pending(self.dependencies)}"
        return self.pool.why_not(self.demand)

    def _may_start(self) -> bool:
        """Asked at every step while the task waits: its arguments are ready and its resources free."""
        if self.cancelled or self.evicted:
            return True  # to end at once
        for ref in self.dependencies:
            if not ref.ready:
                return False
        return self.pool.fits(self.demand)

    def cancel_from_program(self, force: bool, recursive: bool) -> None:
        if recursive:
            self.cancel(force)
        else:
            self._cancel_this(force)

    def cancel(self, force: bool) -> None:
        """``ray.cancel(recursive=True)``: this task, and the unfinished tasks and actor calls it submitted, and theirs."""
        if self.finished:
            return
        self._cancel_this(force)
        for child in self.worker.children:
            child(force)

    def _cancel_this(self, force: bool) -> None:
        """A task not started never runs; a running one is interrupted at its next Ray call."""
        if self.finished:
            return
        self.worker.cancelled = True
        if not self.started:
            self.cancelled = True
            return
        self.interrupted = True
        # Ray raises KeyboardInterrupt in the task; force=True kills its worker.
        self.worker.interrupt = WorkerCrash() if force else KeyboardInterrupt()

    def _evict(self) -> None:
        """Its placement group is removed: it never starts, or its worker is killed at its next Ray call."""
        if self.finished:
            return
        self.evicted = True
        if self.started:
            self.worker.interrupt = WorkerCrash()

    def _body(self) -> None:
        self.started = True
        cluster = self.pool
        cluster.take(self.label, self.demand, releases_when_blocked=True)
        try:
            self._run()
        finally:
            cluster.give(self.label)
            self.finished = True

    def _run(self) -> None:
        runtime, agent = self.runtime, self.agent
        execution = runtime.execution
        if self.cancelled:
            store_error(self.refs, TaskCancelledError(f"{self.label} was cancelled before it started"))
            return
        if self.evicted:
            store_error(self.refs, TaskPlacementGroupRemoved(
                f"The placement group corresponding to this task has been removed ({self.label} never started)"
            ))
            return
        failed = failed_dependency(self.dependencies)
        if failed is not None:
            store_error(self.refs, failed)
            return
        execution.emit(agent, "task.start", {"task": self.remote.__name__})
        while self._attempt():
            pass  # retried
        execution.emit(agent, "task.end", {"task": self.remote.__name__})

    def _attempt(self) -> bool:
        """Run the task once, on a worker process of the pool; whether it runs again."""
        runtime, agent = self.runtime, self.agent
        execution = runtime.execution
        # Each attempt leases a process: it may have run other tasks, whose globals it kept.
        process = runtime.workers.lease(self.shipment)
        died = False
        try:
            args, kwargs = resolve(self.args, self.kwargs, self.dependencies)
            value = process.load(self.shipment, runtime.workers.program)(*args, **kwargs)
            if self.stream is not None:
                value = produce(runtime, agent, self.stream, value)
            elif self.dynamic:
                value = produce_all(runtime, agent, self.label, value, lambda error: task_error(
                    self.remote.__qualname__, error, execution.source_files, process.label))
            elif inspect.isgenerator(value):
                value = yielded_returns(runtime, agent, value, len(self.refs))
            runtime.checkpoint(agent)
        except (WorkerCrash, KeyboardInterrupt, SystemExit) as error:
            # sys.exit in a task ends its worker process, as a crash does (Ray retries it).
            died = not isinstance(error, KeyboardInterrupt)
            if self.interrupted:
                store_error(self.refs, TaskCancelledError(f"{self.label} was cancelled while it ran"))
                return False
            if not died:
                raise
            if self.evicted:
                self._lost_with_group()
                return False
            if self._retry():
                return True
            store_error(self.refs, WorkerCrashedError(
                f"the worker running {self.label} died and its {self._declared()} retries are used up"
            ))
            return False
        except Exception as error:  # noqa: BLE001 - a task's error goes to whoever gets its result
            if opts.may_retry(error, self.retry_exceptions) and self._retry():
                return True
            store_error(self.refs, task_error(self.remote.__qualname__, error, execution.source_files, process.label))
            return False
        finally:
            runtime.workers.give_back(process, self.shipment, died, self.remote.max_calls)
        refs = self.refs
        writes = ((refs[0].object_name, Access.WRITE),) if len(refs) == 1 else tuple(
            [(ref.object_name, Access.WRITE) for ref in refs]
        )
        execution.yield_point(agent, Operation("task.end", writes, self.label))
        store_value(self.refs, value, self.remote.__qualname__)
        return False

    def _lost_with_group(self) -> None:
        """Killed by the removal of its group: failed with ``max_retries=0``, else retried, never to be placed."""
        assert isinstance(self.pool, BundlePlacement)
        group = self.pool.group
        if self.remote._options.get("max_retries") == 0:
            store_error(self.refs, WorkerCrashedError(
                f"the worker running {self.label} was killed: its placement group {group.label} was removed"
            ))
            return
        # Ray retries it (max_retries defaults to 3), and the retry waits for the removed group for good.
        execution, agent = self.runtime.execution, self.agent
        execution.emit(agent, "task.retry", {"task": self.remote.__name__})
        execution.block(agent, Wait(lambda: False, lambda: f"{group.label}, which was removed while {self.label} "
                                                           "ran in it: Ray retries the task there"),
                        Operation("task.start", (), self.label))

    def _retry(self) -> bool:
        if self.retries_left == 0:
            return False
        if self.retries_left > 0:
            self.retries_left -= 1
        self.runtime.execution.emit(self.agent, "task.retry", {"task": self.remote.__name__})
        return True

    def _declared(self) -> str:
        value = self.remote._options.get("max_retries")
        return "unlimited" if value == -1 else str(value)
