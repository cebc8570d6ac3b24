"""The cluster's worker processes, and what each one remembers between the tasks it runs.

Ray runs tasks in a pool of worker processes that it reuses: a task leases
an idle worker, runs, and hands it back for the next task. A worker loads a
remote function once (its own copy of the globals the function refers to)
and imports the program's other modules once, so whatever a task leaves in
them is there for the next task that lands on the same worker, and only
there. The driver's copies never change. Measured with Ray 2.60: on one
CPU, three calls of a task appending to a global list see it 1, 2 and 3
entries long, another task of the script does not see that list (Ray ships
each function with globals of its own), but it does see what the first task
put in a module the script imports (``helper.CACHE``), and an actor runs in
a process of its own with that module fresh.

So here:

- each :class:`WorkerProcess` keeps the functions it loaded and its own
  copies of the program's other modules (``import helper`` in it imports
  its own ``helper``), made on first use;
- which idle process runs a task is a ``worker`` choice, asked only for a
  task whose code can keep state in its process (see
  :attr:`~.shipping.Shipment.keeps_state`); a process that never ran such a
  task is as good as a new one, so all of those are one option. With
  ``ray.init(num_cpus=N)`` the pool holds N processes before Ray starts
  another one (only when all are busy: tasks blocked in ``ray.get`` keep
  theirs); an undeclared cluster may always start one;
- an actor (and each restart of it) has a process of its own;
- a process dies with a crash or ``ray.cancel(force=True)``, and after
  ``max_calls`` calls of one function (``@ray.remote(max_calls=N)``; 1 by
  default for a function declaring ``num_gpus``, as in Ray).
"""

from __future__ import annotations

import builtins as builtins_module
import math
import types
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from dnsse.engine.choices import ChoiceKind
from dnsse.frameworks.ray.program import ProgramModules
from dnsse.frameworks.ray.shipping import Shipment

if TYPE_CHECKING:
    from dnsse.engine.execution import Execution
    from dnsse.engine.siblings import SiblingModules
    from dnsse.frameworks.ray.resources import Cluster


@dataclass
class WorkerProcess:
    number: int
    # Its ``__builtins__``: an ``__import__`` that gives its own copies of the program's other modules.
    builtins: dict[str, Any]
    forget: Callable[[], None]
    loaded: dict[int, Any] = field(default_factory=dict)
    calls: dict[int, int] = field(default_factory=dict)
    busy: bool = False
    # Never ran code that can keep state here: as good as a new process.
    clean: bool = True
    alive: bool = True

    @property
    def label(self) -> str:
        return f"worker process {self.number}"

    def load(self, shipment: Shipment, program: ProgramModules) -> Any:
        """``shipment``'s root as this process runs it: loaded at its first use here, then kept."""
        if shipment.keeps_state:
            self.clean = False
        root = self.loaded.get(id(shipment))
        if root is None:
            root = self.loaded[id(shipment)] = self._load(shipment, program)
        return root

    def _load(self, shipment: Shipment, program: ProgramModules) -> Any:
        if shipment.home is not None:
            found = self._attribute(shipment.home, shipment.root.__qualname__)
            if found is not None:
                return getattr(found, "__wrapped__", found)
        return shipment.fresh(self.builtins, lambda value: self.relocate(value, program))

    def relocate(self, value: Any, program: ProgramModules) -> Any:
        """This process's copy of ``value`` where it comes from the driver's copy of another program module."""
        if isinstance(value, types.ModuleType):
            home = program.relative(value.__name__)
            return value if home is None else self._import(home)
        home = program.relative(getattr(value, "__module__", None))
        if home is None or not isinstance(getattr(value, "__qualname__", None), str):
            return value
        found = self._attribute(home, value.__qualname__)
        return value if found is None else found

    def _import(self, dotted: str) -> types.ModuleType:
        module = self.builtins["__import__"](dotted, {}, {}, ["__name__"], 0)
        return module

    def _attribute(self, home: str, qualname: str) -> Any:
        if "<locals>" in qualname:
            return None  # defined inside a function: only shipped by value
        found: Any = self._import(home)
        for part in qualname.split("."):
            found = getattr(found, part, None)
            if found is None:
                return None
        return found


class WorkerPool:
    def __init__(self, execution: Execution, cluster: Cluster, siblings: SiblingModules | None) -> None:
        self.execution = execution
        self.cluster = cluster
        self.siblings = siblings
        self.program = ProgramModules(names=siblings.names if siblings is not None else frozenset())
        # The pool that tasks lease from; actors' processes are not in it.
        self.processes: list[WorkerProcess] = []
        self._every: list[WorkerProcess] = []
        self._copy_name = "__dnsse_ray"

    def set_program(self, module_name: str) -> None:
        """The driver's module copy is ``module_name``: its other modules are ``module_name.helper``."""
        self.program.prefix = f"{module_name}."
        self._copy_name = module_name.rstrip("_")

    def lease(self, shipment: Shipment) -> WorkerProcess:
        """The idle process that runs a task of ``shipment`` now: a choice where the process matters."""
        if not shipment.keeps_state:
            # No choice to ask: the first of the options below, a clean idle process, is the one taken.
            clean = self._first_clean_idle()
            if clean is not None:
                clean.busy = True
                return clean
        idle = [p for p in self.processes if not p.busy]
        clean = next((p for p in idle if p.clean), None)
        options: list[WorkerProcess | None] = [p for p in idle if not p.clean]
        if clean is not None:
            options.insert(0, clean)
        elif self._may_start(idle):
            options.insert(0, None)  # a new process
        index = self.execution.choose_value(ChoiceKind.WORKER, len(options)) if shipment.keeps_state else 0
        process = options[index]
        if process is None:
            process = self._start()
            self.processes.append(process)
        process.busy = True
        return process

    def _first_clean_idle(self) -> WorkerProcess | None:
        for process in self.processes:
            if process.clean and not process.busy:
                return process
        return None

    def give_back(self, process: WorkerProcess, shipment: Shipment, died: bool, max_calls: int) -> None:
        """The task is over; the process exits when it died or ran ``max_calls`` calls of the function."""
        process.busy = False
        calls = process.calls[id(shipment)] = process.calls.get(id(shipment), 0) + 1
        if died or 0 < max_calls <= calls:
            self.end(process)

    def dedicated(self) -> WorkerProcess:
        """A new process, outside the pool: an actor's."""
        return self._start()

    def end(self, process: WorkerProcess) -> None:
        """The process exits: what it kept is gone."""
        process.alive = False
        if process in self.processes:
            self.processes.remove(process)

    def close(self) -> None:
        """The job is over: forget every process's modules."""
        for process in self._every:
            process.forget()
        self._every.clear()
        self.processes.clear()

    def _may_start(self, idle: list[WorkerProcess]) -> bool:
        cpus = self.cluster.total.get("CPU")
        if cpus is None or not idle:
            return True
        return len(self.processes) < max(1, math.ceil(cpus))

    def _start(self) -> WorkerProcess:
        number = len(self._every) + 1
        if self.siblings is not None:
            builtins, forget = self.siblings.importer(f"{self._copy_name}_process{number}__")
        else:
            builtins, forget = dict(vars(builtins_module)), (lambda: None)
        process = WorkerProcess(number, builtins, forget)
        self._every.append(process)
        return process
