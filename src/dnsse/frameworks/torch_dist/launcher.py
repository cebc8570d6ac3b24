"""torch programs as their users launch them: torchrun's ranks, and ranks that ``mp.spawn`` starts.

- ``torchrun [OPTIONS] FILE.py ARGS``: every rank runs the file as
  ``__main__`` with the environment torchrun gives it (:mod:`dnsse.engine.torchrun`),
  from the start of the execution; its ``init_process_group()`` (``env://``)
  binds to the controlled default group.
- ``python FILE.py ARGS`` (or an entry function that takes no rank): one
  process, the launcher, runs the file. ``torch.multiprocessing.spawn(fn,
  args, nprocs)`` and ``start_processes`` there start ``nprocs`` controlled
  ranks running ``fn(i, *args)``, each in a process of its own that inherits
  the launcher's environment as it is then; ``join`` waits for them all, as
  torch's does. An exception in a rank is a bug of that rank, as in an entry
  function (torch's join would raise it in the launcher, ending the job).
- ``mp.Process(target=init_process, args=(rank, size, ...))`` started by the
  launcher, one per rank (the pattern of "Writing Distributed Applications
  with PyTorch"): the first two arguments are taken as the rank and the
  world size, as in an entry function; the first process started makes a
  world of ``size`` ranks, each of which runs its process's ``run()`` once
  that process is started, and ``join``, ``is_alive`` and ``exitcode`` of
  the process follow its rank. A process whose arguments do not start with
  a rank and a world size stays refused (exit 2).

Each process's own ``os.environ`` is :mod:`dnsse.engine.process_env`'s.
"""

from __future__ import annotations

import multiprocessing.process
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import torch.multiprocessing

from dnsse.engine.agent import ThreadAgent
from dnsse.engine.execution import ExecutionAborted, current_agent
from dnsse.engine.operation import Access, Operation
from dnsse.engine.process_env import ProcessEnvironments
from dnsse.engine.uncontrolled import refuse
from dnsse.frameworks.threads.primitive import block_until
from dnsse.frameworks.torch_dist.world import LAUNCHES, RankState, World, rank_here

if TYPE_CHECKING:
    from dnsse.engine.execution import Execution

_real_start_processes = torch.multiprocessing.start_processes
_NESTED = (
    "a rank that starts processes of its own would start ranks of a second job beside the first; dnsse runs "
    "the ranks that torchrun, or the launching process's mp.spawn, starts: check the script that calls mp.spawn "
    "(`dnsse check FILE.py`), or the function the processes run (FILE.py:FUNC with --world-size N)"
)


@dataclass(eq=False)
class Launches:
    """One execution's launcher: how it makes a world of ranks, and whose environment is whose."""

    execution: Execution
    # Makes a world of N ranks: ``start_ranks(size, program_of)``, each rank running ``program_of(its state)``.
    start_ranks: Callable[[int, Callable[[RankState], Callable[[], None]]], World]
    environments: ProcessEnvironments
    # The world whose ranks mp.Process objects start one by one, and the process of each rank so far.
    process_world: tuple[World, list] | None = field(default=None)


def launches_of(execution: Execution) -> Launches | None:
    found = execution.framework_state.get(LAUNCHES)
    return found if isinstance(found, Launches) else None


class ProcessContext:
    """What ``mp.spawn(join=False)`` returns: the started ranks, and ``join`` for them."""

    def __init__(self, agents: list[ThreadAgent]) -> None:
        self.agents = agents
        self.processes = agents

    def pids(self) -> list[int]:
        return [agent.id for agent in self.agents]

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """True once every rank ended; a rank's exception has ended the execution as its bug before."""
        caller = current_agent()
        assert caller is not None
        objects = tuple((f"agent#{agent.id}", Access.READ) for agent in self.agents)
        operation = Operation("process.join", objects, "mp.spawn's ranks")
        running = [agent for agent in self.agents if not agent.done]
        return block_until(
            caller,
            operation,
            lambda: all(agent.done for agent in self.agents),
            lambda: f"the ranks mp.spawn started ({', '.join(a.name for a in running)}) to finish",
            timeout,
        )


def spawn(
    fn: Callable[..., object],
    args: tuple = (),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
) -> ProcessContext | None:
    """``torch.multiprocessing.spawn``: ``nprocs`` controlled ranks running ``fn(rank, *args)``."""
    return _start(fn, args, nprocs, join, daemon, start_method, "torch.multiprocessing.spawn")


def start_processes(
    fn: Callable[..., object],
    args: tuple = (),
    nprocs: int = 1,
    join: bool = True,
    daemon: bool = False,
    start_method: str = "spawn",
) -> ProcessContext | None:
    """``torch.multiprocessing.start_processes``, any start method."""
    return _start(fn, args, nprocs, join, daemon, start_method, "torch.multiprocessing.start_processes")


def _start(
    fn: Callable[..., object],
    args: tuple,
    nprocs: int,
    join: bool,
    daemon: bool,
    start_method: str,
    api: str,
) -> ProcessContext | None:
    agent = current_agent()
    if agent is None:
        # dnsse's own code, outside every execution.
        return _real_start_processes(fn, args, nprocs, join, daemon, start_method)
    launches = launches_of(agent.execution)
    if launches is None or rank_here() is not None:
        refuse(api, _NESTED)
    if not isinstance(nprocs, int) or nprocs < 1:
        raise ValueError(f"nprocs must be a positive int, got {nprocs!r}")
    environments = launches.environments

    def body_of(state: RankState) -> Callable[[], None]:
        environments.inherit(state, None)
        return lambda: fn(state.rank, *args)

    agent.execution.yield_point(agent, Operation("process.start", (), f"mp.spawn of {nprocs} ranks"))
    world = launches.start_ranks(nprocs, body_of)
    context = ProcessContext([state.main_agent for state in world.ranks])
    if not join:
        return context
    context.join()
    if agent.execution.aborted:
        raise ExecutionAborted()
    return None


class ControlledPopen:
    """What a started ``mp.Process`` holds as its ``_popen``: its rank's agent stands for the child process."""

    def __init__(self, agent: ThreadAgent) -> None:
        self.agent = agent
        self.pid = agent.id + 1
        self.returncode: int | None = None

    def poll(self, flag: int = 0) -> int | None:
        # An exception in the rank has ended the execution as its bug: only a normal end is seen here.
        return 0 if self.agent.done else None

    def wait(self, timeout: float | None = None) -> int | None:
        caller = current_agent()
        if caller is not None and not self.agent.done:
            operation = Operation("process.join", ((f"agent#{self.agent.id}", Access.READ),), self.agent.name)
            block_until(caller, operation, lambda: self.agent.done, lambda: f"{self.agent.name} to finish", timeout)
        return self.poll()

    def terminate(self) -> None:
        refuse("multiprocessing.Process.terminate", "dnsse runs a rank to its end; let the rank return instead")

    kill = terminate

    def close(self) -> None:
        pass


def start_process(process: multiprocessing.process.BaseProcess) -> bool:
    """``process.start()`` by the launching process: its rank runs it; False when it is no rank's process."""
    agent = current_agent()
    launches = launches_of(agent.execution) if agent is not None else None
    arguments = getattr(process, "_args", ())
    if agent is None or launches is None or rank_here() is not None or not _rank_and_size(arguments):
        return False
    rank, size = arguments[0], arguments[1]
    current = launches.process_world
    if current is None or current[0].size != size or all(given is not None for given in current[1]):
        agent.execution.yield_point(agent, Operation("process.start", (), f"mp.Process of rank {rank}"))
        processes: list = [None] * size

        def program_of(state: RankState) -> Callable[[], None]:
            return lambda: _run_when_started(state, processes)

        current = launches.process_world = (launches.start_ranks(size, program_of), processes)
    else:
        agent.execution.yield_point(agent, Operation("process.start", (), f"mp.Process of rank {rank}"))
    world, processes = current
    if processes[rank] is not None:
        return False  # a second process for one rank: not the one-process-per-rank launcher
    state = world.ranks[rank]
    launches.environments.inherit(state, None)
    processes[rank] = process
    process._popen = ControlledPopen(state.main_agent)  # type: ignore[attr-defined]
    return True


def _rank_and_size(arguments: tuple) -> bool:
    if len(arguments) < 2 or not all(type(value) is int for value in arguments[:2]):
        return False
    return 0 <= arguments[0] < arguments[1]


def _run_when_started(state: RankState, processes: list) -> None:
    """The rank's process runs once the launcher started its mp.Process (a rank never started waits: a hang)."""
    agent = state.main_agent
    if processes[state.rank] is None:
        block_until(
            agent,
            Operation("process.started", (), agent.name),
            lambda: processes[state.rank] is not None,
            lambda: f"its mp.Process (rank {state.rank}) to be started",
            None,
        )
    processes[state.rank].run()


REPLACEMENTS: dict[str, Any] = {"spawn": spawn, "start_processes": start_processes}
