"""What the controlled Ray remembers about one execution, and who each agent works for.

Every agent that runs Ray code carries a :class:`Worker` as its handle: the
driver, a task, or a call of an actor. The worker says who the *caller* is
when the agent submits actor calls (Ray orders a synchronous actor's calls per
caller) and whether a fault may strike it (only where the program declared
``max_restarts`` or ``max_retries``). Agents that are not Ray workers (threads
the program starts) count as the driver.

Faults are bounded: at most :data:`MAX_FAULTS` crashes per execution, each
one a ``fault`` choice in the choice sequence, so the search space stays
small and a replay crashes at the same point.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from dnsse.engine.agent import ThreadAgent
from dnsse.engine.choices import ChoiceKind
from dnsse.engine.execution import Execution, current_agent
from dnsse.engine.operation import Access
from dnsse.frameworks.ray.processes import WorkerPool
from dnsse.frameworks.ray.resources import Cluster
from dnsse.frameworks.ray.shipping import Shipment, shipment_of

if TYPE_CHECKING:
    from dnsse.engine.siblings import SiblingModules
    from dnsse.frameworks.ray.actors import Actor, Call
    from dnsse.frameworks.threads.shared_state import SharedStatePlan

MAX_FAULTS = 1


class WorkerCrash(BaseException):
    """Unwinds the body of a task or actor method whose worker died.

    A ``BaseException`` so that the program's ``except Exception`` does not
    swallow the crash, just as it cannot catch a real process dying.
    """


@dataclass
class Worker:
    """What an agent runs: ``caller`` orders its actor calls, ``crash`` kills it."""

    caller: str
    label: str
    actor: Actor | None = None
    call: Call | None = None
    # Called at a fault point that injects a crash; None: no fault may strike here.
    crash: Callable[[], None] | None = None
    # Raised at the worker's next Ray call or await: how ``ray.cancel`` interrupts it.
    interrupt: BaseException | None = None
    # ``ray.cancel`` reached its task or call: what ``ray.get_runtime_context().is_canceled()`` says.
    cancelled: bool = False
    # The runtime's own machinery (an async actor's event loop): left out of deadlock reports.
    machinery: bool = False
    # How to cancel each task and actor call this worker submitted (given ``force``):
    # ``ray.cancel(recursive=True)`` of its own task or call reaches them.
    children: list[Callable[[bool], None]] = field(default_factory=list)
    # The placement group a task runs in, and whether the tasks and actors it starts run there too
    # (an actor's workers ask their actor instead).
    placement_group: Any = None
    capture_child_tasks: bool = False
    # The agent that runs it (-1: the driver), and the workers whose steps a ray.cancel or
    # ray.kill of it can change: what it submitted, the coroutines of its call (see affected_agents).
    agent_id: int = -1
    related: list[Worker] = field(default_factory=list, compare=False, repr=False)

    def affected_agents(self) -> tuple[tuple[str, Access], ...]:
        """``agent#N`` of this worker and of those related to it, transitively: what a cancel or kill observes.

        Every step of agent N writes ``agent#N`` (dnsse.search.dependency), so an
        operation that names them is dependent with each step of theirs: a
        search then orders the cancel before and after each of them, as where
        it lands changes what happens.
        """
        seen: set[int] = set()
        pending = [self]
        while pending:
            worker = pending.pop()
            if worker.agent_id in seen:
                continue
            seen.add(worker.agent_id)
            pending.extend(worker.related)
        seen.discard(-1)
        return tuple((f"agent#{agent}", Access.READ) for agent in sorted(seen))

    def placement(self) -> tuple[Any, bool]:
        """The placement group this worker runs in (None: none), and whether its children are captured."""
        if self.actor is not None:
            return self.actor.placement_group, self.actor.capture_child_tasks
        return self.placement_group, self.capture_child_tasks


@dataclass
class RayRuntime:
    execution: Execution
    faults: bool
    plan: SharedStatePlan | None = None
    initialized: bool = False
    faults_left: int = 0
    named: dict[tuple[str, str], Actor] = field(default_factory=dict)
    driver: Worker = field(default_factory=lambda: Worker("driver", "driver"))
    cluster: Cluster = field(default_factory=Cluster)
    # ray.util.placement_group's groups: every one made (numbering them), and the named ones by name.
    placement_groups_made: list = field(default_factory=list)
    placement_groups: dict = field(default_factory=dict)
    # The modules beside the target, which every worker process imports afresh.
    siblings: SiblingModules | None = None

    def __post_init__(self) -> None:
        self.faults_left = MAX_FAULTS if self.faults else 0
        self.workers = WorkerPool(self.execution, self.cluster, self.siblings)
        self._refs = itertools.count(1)
        self._work = itertools.count(1)
        self._actors: dict[str, itertools.count] = {}
        self._shipments: dict[int, Shipment] = {}

    def next_ref_number(self) -> int:
        return next(self._refs)

    def next_work_number(self) -> int:
        """Numbers tasks and actor calls in submission order: ``f#3``, ``Counter#1.add#4``."""
        return next(self._work)

    def next_actor_label(self, class_name: str) -> str:
        counter = self._actors.setdefault(class_name, itertools.count(1))
        return f"{class_name}#{next(counter)}"

    def shipment(self, root: Callable | type) -> Shipment:
        """``root`` as first shipped to workers in this execution (see :mod:`.shipping`)."""
        shipment = self._shipments.get(id(root))
        if shipment is None or shipment.root is not root:
            shipment = shipment_of(root, self.execution.source_files, self.workers.program)
            self._shipments[id(root)] = shipment
        return shipment

    def worker_of(self, agent: ThreadAgent) -> Worker:
        handle = agent.handle
        return handle if isinstance(handle, Worker) else self.driver

    def interrupt_of(self, agent: ThreadAgent, take: bool) -> BaseException | None:
        """What interrupts a task's worker (``ray.cancel``, a removed placement group) where it sleeps or waits.

        Ray delivers KeyboardInterrupt to the task's main thread with
        ``_thread.interrupt_main()``: it ends a Ray call, and is raised after a
        ``time.sleep`` or a lock's wait once that ends by itself (no signal wakes
        them: dnsse.frameworks.threads.runtime.ends_waits); threads the task
        started are not interrupted. A killed worker ends every wait.
        """
        worker = agent.handle
        if not isinstance(worker, Worker):
            return None
        interrupt = worker.interrupt
        if take:
            worker.interrupt = None
        return interrupt

    def checkpoint(self, agent: ThreadAgent, faults: bool = True) -> None:
        """A point inside Ray code where the worker may die.

        An orphaned call (its actor crashed or was killed meanwhile) unwinds
        here; otherwise, where a fault is declared, ``faults`` is true and the
        budget allows, the chooser decides whether the worker crashes now.
        Points right after a wait pass ``faults=False``: a crash there is the
        same as one at the next point, and would only double the choices.
        """
        worker = agent.handle
        if not isinstance(worker, Worker):
            worker = self.driver
        call = worker.call
        # Call.orphaned, inlined: this runs several times in every task and call.
        if call is not None and call.epoch != -1 and call.epoch != call.actor.epoch:
            raise WorkerCrash()
        if worker.interrupt is not None:
            interrupt, worker.interrupt = worker.interrupt, None
            raise interrupt
        if not faults or worker.crash is None or self.faults_left <= 0:
            return
        if self.execution.choose_value(ChoiceKind.FAULT, 2) == 1:
            self.faults_left -= 1
            event = "actor.crash" if worker.actor is not None else "task.crash"
            self.execution.emit(agent, event, {"worker": worker.label})
            worker.crash()
            raise WorkerCrash()


def install_runtime(runtime: RayRuntime) -> None:
    runtime.execution.framework_state["ray"] = runtime


def controlled(api: str) -> tuple[ThreadAgent, RayRuntime]:
    """The calling agent and its execution's runtime; a clear error outside a controlled run."""
    agent = current_agent()
    runtime = agent.execution.framework_state.get("ray") if agent is not None else None
    if agent is None or runtime is None:
        raise RuntimeError(
            f"{api} was called outside a dnsse execution of a Ray program; under dnsse, Ray calls run "
            "inside the driver function (FILE.py:FUNC) and the tasks and actors it starts, "
            "not at the top level of the module"
        )
    return agent, runtime


def current_runtime() -> RayRuntime | None:
    agent = current_agent()
    return agent.execution.framework_state.get("ray") if agent is not None else None  # type: ignore[return-value]


def current_worker() -> Worker | None:
    agent = current_agent()
    if agent is None:
        return None
    runtime = agent.execution.framework_state.get("ray")
    return runtime.worker_of(agent) if runtime is not None else None

