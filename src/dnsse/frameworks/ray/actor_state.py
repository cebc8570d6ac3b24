"""An actor's life and the start rule of its calls.

Every call of an actor is an agent of its own that waits until the actor lets
it start; the scheduler then picks among the calls that may start, so every
order Ray allows is explored, and no other:

- a *synchronous* actor runs one call at a time, and the calls of one caller
  in submission order (Ray's per-caller FIFO); calls of different callers in
  any order. ``allow_out_of_order_execution=True`` drops the per-caller order.
- a *threaded* actor (``max_concurrency > 1``, or ``concurrency_groups``)
  runs up to ``max_concurrency`` calls at once, in any order, under the
  shared-state tracer, so their reads and writes of ``self`` interleave.
- an *async* actor (any ``async def`` method) runs up to ``max_concurrency``
  coroutines on its event loop, only one at a time: control passes only at
  an ``await`` (see :mod:`.coroutines`).
- ``concurrency_groups={"io": 2, ...}`` split those limits: a call runs in
  its method's group (``@ray.method(concurrency_group=...)`` or
  ``.options(concurrency_group=...)``), the others in the default group of
  ``max_concurrency``; each group counts its own running calls, and in an
  async actor each group has an event loop (a thread) of its own, so
  coroutines of different groups interleave at any point, under the tracer.

A call starts only when its top-level ref arguments are ready (a synchronous
actor's later calls from the same caller wait behind it). A crash
(``max_restarts``) kills every running call, drops the instance and re-runs
the constructor with the original arguments; running calls are retried when
``max_task_retries`` allows, else fail with ``RayActorError``. Calls not yet
started run on the restarted actor. Out of restarts, or killed with
``ray.kill``, the actor is dead and every call fails with ``ActorDiedError``.
An actor placed in a placement group dies when the group is removed, or,
not yet created then, never is (``ActorUnschedulableError``).
"""

from __future__ import annotations

import collections
import inspect
import types
from typing import Any, Callable

from dnsse.engine.agent import ThreadAgent, Wait
from dnsse.engine.execution import current_agent
from dnsse.engine.operation import Access, Operation
from dnsse.frameworks.ray import options as opts
from dnsse.frameworks.ray.errors import ActorDiedError, ActorUnschedulableError, RayActorError, RayError
from dnsse.frameworks.ray.refs import (
    ObjectRef,
    all_ready,
    describe_pending,
    failed_dependency,
    resolve,
    top_level_refs,
)
from dnsse.frameworks.ray.placement_groups import BundlePlacement, placement_of
from dnsse.frameworks.ray.processes import WorkerProcess
from dnsse.frameworks.ray.resources import demand_of
from dnsse.frameworks.ray.results import task_error
from dnsse.frameworks.ray.runtime import RayRuntime, Worker, WorkerCrash
from dnsse.frameworks.ray.serialization import copy_value
from dnsse.frameworks.ray.shipping import Shipment

CREATING, ALIVE, RESTARTING, DEAD = "creating", "alive", "restarting", "dead"
# The method every actor has: a call that, when its turn comes, ends the actor for good.
TERMINATE = "__ray_terminate__"
EXITED = "it exited on purpose (ray.actor.exit_actor() or __ray_terminate__)"


class ActorExit(SystemExit):
    """``ray.actor.exit_actor()``: unwinds the call, then the actor dies without restarting (Ray raises SystemExit)."""


def terminate() -> None:
    """The body of ``__ray_terminate__``: Ray's graceful exit, queued behind the calls submitted before it."""
    raise ActorExit()
DEFAULT_GROUP = "_ray_default_group"


def _groups(declared: object) -> dict[str, int]:
    if declared is None:
        return {}
    if not isinstance(declared, dict) or not all(
        isinstance(name, str) and isinstance(size, int) and not isinstance(size, bool) and size > 0
        for name, size in declared.items()
    ):
        raise ValueError(
            f"concurrency_groups must be a dict of group name to a positive int size, for example "
            f"{{'io': 2, 'compute': 4}}; got {declared!r}"
        )
    return dict(declared)


def _has_async_methods(cls: type) -> bool:
    """Whether any function ``cls`` has (its own or inherited, as ``getattr`` finds it) is ``async``."""
    seen: set[str] = set()
    for klass in cls.__mro__[:-1]:  # not object, the last: it has no Python functions
        for name, member in vars(klass).items():
            if name in seen:
                continue
            seen.add(name)
            if isinstance(member, staticmethod):
                member = member.__func__
            if isinstance(member, types.FunctionType) and (
                inspect.iscoroutinefunction(member) or inspect.isasyncgenfunction(member)
            ):
                return True
    return False


class Actor:
    """One actor of an execution: its kind, its state, its running and queued calls."""

    def __init__(
        self, runtime: RayRuntime, cls: type, shipment: Shipment, args: tuple, kwargs: dict, options: dict[str, Any],
        parent: Worker,
    ) -> None:
        self.runtime = runtime
        self.cls = cls
        self.shipment = shipment
        self.label = runtime.next_actor_label(cls.__name__)
        self.object_name = f"actor:{self.label}"
        self.args = args
        self.kwargs = kwargs
        self.dependencies = top_level_refs(args, kwargs)
        self.is_async = _has_async_methods(cls)
        default_concurrency = 1000 if self.is_async else 1
        self.max_concurrency = int(options.get("max_concurrency") or default_concurrency)
        self.groups = {DEFAULT_GROUP: self.max_concurrency, **_groups(options.get("concurrency_groups"))}
        self.threaded = not self.is_async and (self.max_concurrency > 1 or len(self.groups) > 1)
        # Calls that may run at the same moment share self: their steps are traced.
        self.parallel = self.threaded or len(self.groups) > 1
        self.max_pending_calls = int(options.get("max_pending_calls") or -1)
        in_order = options.get("allow_out_of_order_execution")
        if in_order is False and (self.is_async or self.threaded):
            kind = "async" if self.is_async else "multi-threaded"
            raise ValueError(
                f"If you're using {kind} actors, Ray can't execute actor tasks in order. "
                "Set `allow_out_of_order_execution=True` to allow out-of-order execution."
            )
        self.ordered = not (self.is_async or self.threaded) and not in_order
        self.max_restarts = opts.retries(options.get("max_restarts"))
        self.max_task_retries = opts.retries(options.get("max_task_retries"))
        self.name: tuple[str, str] | None = None
        self.state = CREATING
        # Its constructor (of this life) has begun.
        self.constructing = False
        self.instance: Any = None
        # The worker process of its current life (see .processes).
        self.process: WorkerProcess | None = None
        self.death: RayError | None = None
        self.restarts = 0
        # Bumped by every crash and kill: a call begun in an older epoch is orphaned.
        self.epoch = 0
        self.running: list[Call] = []
        self.queues: dict[str, collections.deque[Call]] = {}
        # An async actor's event loop of each concurrency group, made at its first call.
        self.loops: dict[str, Any] = {}
        self.default_group = DEFAULT_GROUP
        # Held for the actor's life; creating it needs a CPU free even when it holds none.
        self.demand = demand_of(options, default_cpus=0)
        self.creation_demand = {"CPU": 1.0, **self.demand}
        # The cluster's pool, or the bundle of the placement group the actor is placed in.
        self.pool = placement_of(runtime, options, self.demand, self.label, parent)
        self.placement_group: Any = None
        self.capture_child_tasks = False
        if isinstance(self.pool, BundlePlacement):
            # In a bundle the actor needs only what it declares (Ray sizes the bundle for it).
            self.creation_demand = self.demand
            self.placement_group = self.pool.group
            self.capture_child_tasks = self.pool.capture_child_tasks
            self.pool.group.on_removal.append(self._evict)
        self._create(restart=False)

    # --------------------------------------------------------------- creation
    def _create(self, restart: bool) -> None:
        execution = self.runtime.execution
        label = f"{self.label}.__init__"
        agent = ThreadAgent(execution, label, lambda: self._construct(agent, restart), daemon=True)
        agent.handle = Worker(caller=self.label, label=label, actor=self)
        dependencies = self.dependencies
        agent.pending = Operation("actor.create", ((self.object_name, Access.SYNC),), label)
        cluster = self.pool
        arguments_ready = all_ready(dependencies)

        def why_waiting() -> str:
            if not arguments_ready():
                return f"the arguments of {label}: {describe_pending(dependencies)}"
            return cluster.why_not(self.creation_demand)

        agent.waiting = Wait(
            lambda: self.state == DEAD or (arguments_ready() and cluster.fits(self.creation_demand)),
            why_waiting,
        )

    def _construct(self, agent: ThreadAgent, restart: bool) -> None:
        execution = self.runtime.execution
        if self.state == DEAD:
            return  # its placement group was removed before it could be created
        self.constructing = True
        epoch = self.epoch
        self.pool.take(self.label, self.demand)
        failed = failed_dependency(self.dependencies)
        # Each (re)start is a new worker process, with its own globals and its own program modules.
        self.process = self.runtime.workers.dedicated()
        try:
            if failed is not None:
                raise failed
            args, kwargs = resolve(copy_value(self.args), copy_value(self.kwargs), self.dependencies)
            instance = self.process.load(self.shipment, self.runtime.workers.program)(*args, **kwargs)
        except WorkerCrash:
            return  # its process exited in the constructor: restarted, or dead (see .worker_exit)
        except Exception as error:  # noqa: BLE001 - a failed constructor kills the actor, as in Ray
            cause = task_error(f"{self.cls.__qualname__}.__init__", error, execution.source_files, self.process.label)
            self.die(f"the actor died because of an error raised in its creation task: {cause.summary()}")
            return
        if self.epoch != epoch or self.state == DEAD:
            return  # killed while constructing
        self.instance = instance
        self.state = ALIVE
        execution.emit(agent, "actor.restart" if restart else "actor.create", {"actor": self.label})

    # ------------------------------------------------------------------- calls
    def enqueue(self, call: Call) -> None:
        self.queues.setdefault(call.caller, collections.deque()).append(call)

    def may_start(self, call: Call) -> bool:
        if self.state == DEAD or call.cancelled:
            return True  # to fail at once
        if self.state != ALIVE:
            return False
        # Asked at every step while the call waits: a plain loop, not a generator.
        for ref in call.dependencies:
            if not ref.ready:
                return False
        if self.is_async or self.threaded:
            return self._group_has_room(call)
        if self.running:
            return False
        return not self.ordered or self.queues[call.caller][0] is call

    def why_waiting(self, call: Call) -> str:
        if self.state in (CREATING, RESTARTING):
            return f"{self.label} to finish its constructor"
        if not all(ref.ready for ref in call.dependencies):
            return f"the arguments of {call.label}: {describe_pending(call.dependencies)}"
        busy = ", ".join(c.label for c in self.running)
        group = "" if call.group == DEFAULT_GROUP else f" in concurrency group {call.group!r}"
        if self.is_async or self.threaded:
            size = self.groups[call.group]
            return f"a free thread of {self.label}{group} (at most {size} at once; running {busy})"
        if self.running:
            return f"{self.label} to finish {busy} (a synchronous actor runs one call at a time)"
        head = self.queues[call.caller][0]
        return f"{head.label}, submitted earlier by the same caller, to run first"

    def _group_has_room(self, call: Call) -> bool:
        running = self.running
        if len(self.groups) == 1:
            return len(running) < self.max_concurrency  # the default group is the only one: every call is in it
        return sum(1 for other in running if other.group == call.group) < self.groups[call.group]

    def pending_calls(self, caller: str) -> int:
        """Calls of ``caller`` submitted and not finished: what ``max_pending_calls`` limits."""
        return len(self.queues.get(caller, ()))

    def begin(self, call: Call) -> None:
        self.running.append(call)
        call.epoch = self.epoch

    def end(self, call: Call) -> None:
        if call in self.running:
            self.running.remove(call)

    def finish(self, call: Call) -> None:
        """The call is over for good: later calls of its caller may go."""
        call.finished = True
        self.end(call)
        queue = self.queues.get(call.caller)
        if queue and call in queue:
            queue.remove(call)

    # ----------------------------------------------------------- crash and kill
    def crash(self) -> None:
        """The actor's process died at a scheduling point inside a call."""
        self._lose_process("its worker crashed (an injected fault: the actor declares max_restarts)", True)

    def process_exited(self, why: str) -> None:
        """Its process ended (``os._exit`` or ``sys.exit`` in it): a restart while ``max_restarts`` allows."""
        self._lose_process(why, True)

    def kill(self, no_restart: bool) -> None:
        self._lose_process("it was killed by ray.kill", not no_restart)

    def _evict(self) -> None:
        """Its placement group is removed: a live actor dies with it, one not yet created never will be."""
        group = self.placement_group.label
        if self.state in (CREATING, RESTARTING) and not self.constructing:
            self.die(f"Could not create the actor because its associated placement group {group} was removed",
                     ActorUnschedulableError)
        else:
            self._lose_process(f"its placement group {group} was removed", False)

    def _lose_process(self, why: str, may_restart: bool) -> None:
        if self.state == DEAD:
            return
        self.epoch += 1
        self.instance = None
        self.pool.give(self.label)
        self.running.clear()
        self._abandon_loops()
        if may_restart and (self.max_restarts == -1 or self.restarts < self.max_restarts):
            self.restarts += 1
            self.state = RESTARTING
            self.constructing = False
            self.runtime.execution.emit(current_agent(), "actor.died", {"actor": self.label, "restarting": True})
            self._create(restart=True)
            return
        self.die(f"the actor is dead because {why}")

    def _abandon_loops(self) -> None:
        for loop in self.loops.values():
            loop.abandon()
        self.loops = {}

    def die(self, why: str, error: type[RayError] = ActorDiedError) -> None:
        self._abandon_loops()
        self.pool.give(self.label)
        self.epoch += 1
        self.state = DEAD
        self.instance = None
        self.death = error(f"{self.label}: {why}")
        self.runtime.execution.emit(current_agent(), "actor.died", {"actor": self.label, "restarting": False})
        if self.name is not None and self.runtime.named.get(self.name) is self:
            del self.runtime.named[self.name]


class Call:
    """One method call of an actor: what is called, by whom, and its result refs."""

    def __init__(
        self, actor: Actor, method: str, number: int, args: tuple, kwargs: dict, refs: list[ObjectRef],
        caller: str, retries: int, group: str = "",
    ) -> None:
        self.actor = actor
        self.group = group or DEFAULT_GROUP
        self.method = method
        self.label = f"{actor.label}.{method}#{number}"
        self.args = args
        self.kwargs = kwargs
        self.refs = refs
        self.caller = caller
        self.retries_left = retries
        self.dependencies = top_level_refs(args, kwargs)
        self.epoch = -1
        # Cancelled before it started (it never runs); cancelled at all (its result is TaskCancelledError).
        self.cancelled = False
        self.cancel_requested = False
        self.finished = False
        # A streaming call's values (see .streaming); its one ref says when it finished.
        self.stream: Any = None
        # A num_returns="dynamic" call: its one ref holds the refs of what it yielded.
        self.dynamic = False
        # What the method returned, in a few characters (see dnsse.engine.value_text), once it returned.
        self.returned: str | None = None
        # An async actor's call runs as this asyncio task on the actor's loop.
        self.task: Any = None
        # The worker running the call, once its agent exists (see calls.start_call).
        self.worker: Worker | None = None

    def cancel(self, force: bool, recursive: bool = False) -> None:
        """``ray.cancel`` of a call, as Ray 2.60 does it (measured).

        A queued call never runs. A running call of a synchronous or
        threaded actor is not interrupted: ``is_canceled()`` of its runtime
        context turns true; a running coroutine gets ``CancelledError`` at
        its await. Either way its result is ``TaskCancelledError``, even if it
        returns normally. ``recursive`` cancels the tasks and actor calls it
        submitted, and theirs (``force`` does not reach actor calls: it is
        refused for them).
        """
        if force:
            raise ValueError("force=True is not supported for actor tasks.")
        if self.finished:
            return
        self.cancel_requested = True
        if self.worker is not None:
            self.worker.cancelled = True
        if self.epoch == -1:
            self.cancelled = True
        elif self.task is not None:
            self.task.cancel()
        if recursive and self.worker is not None:
            for child in list(self.worker.children):
                child(False)

    def orphaned(self) -> bool:
        """Its actor crashed or was killed since the call began."""
        return self.epoch != -1 and self.epoch != self.actor.epoch

    def lost_error(self) -> RayError:
        actor = self.actor
        if actor.state == DEAD and actor.death is not None:
            return type(actor.death)(f"{self.label} failed: {actor.death}")
        return RayActorError(f"{self.label} failed: the actor {actor.label} died while running it (it restarts)")


def crash_of(actor: Actor) -> Callable[[], None] | None:
    """The crash of a call's worker, where the actor declares restarts; None: no fault may strike."""
    if actor.max_restarts == 0:
        return None
    return actor.crash
