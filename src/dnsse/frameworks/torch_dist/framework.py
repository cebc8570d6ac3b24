"""The torch framework: ``FUNC(rank, world_size, **inputs)`` on controlled ranks, or a program as launched.

A launch command, or an entry function that takes no rank, starts its
ranks as users start them (``torchrun``, ``mp.spawn``): see :mod:`.launcher`.

Each rank is a :class:`~dnsse.engine.agent.ThreadAgent` of one process that
runs its own fresh copy of the target module, so module globals are per rank
as in a real multi-process job. ``activate()`` installs the controlled
``torch.distributed`` (see :mod:`.patching`) for a whole campaign.

Events for specifications (``dnsse.emit`` adds the program's own):

- ``collective.issue`` and ``collective.done`` with ``op``, ``rank``,
  ``group`` (``"WORLD"``, or ``"g1"``, ``"g2"``... in ``new_group`` order)
  and ``seq`` (1 for a group's first collective);
- ``send`` when a message is posted and ``recv`` when it is received, both
  with ``src``, ``dst`` and ``tag``;
- ``wait`` with ``op`` and ``rank`` when ``Work.wait()`` returns.

The semantics modelled are gloo's unless a rank asks for NCCL
(``init_process_group("nccl")``, ``init_device_mesh("cuda")``); then
:mod:`.streams` applies to it. ``semantics`` says which were used.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import sys
from pathlib import Path
from typing import Callable, ContextManager, Iterator

import torch
import torch.distributed as dist

from dnsse.engine.agent import ThreadAgent
from dnsse.engine.bugs import Bug
from dnsse.engine.collector import old_objects_frozen
from dnsse.engine.execution import Execution
from dnsse.engine.main_module import run_as_main
from dnsse.engine.process_calls import PROCESS_STARTER
from dnsse.engine.process_env import ProcessEnvironments, chained
from dnsse.engine.target import InputParameter, LoadedTarget, require_no_positional_parameters
from dnsse.engine.uncontrolled import import_refused
from dnsse.errors import BadInput
from dnsse.frameworks.torch_dist.collectives import Collectives
from dnsse.frameworks.torch_dist.launcher import Launches, start_process
from dnsse.frameworks.torch_dist.p2p import Mailboxes
from dnsse.frameworks.torch_dist.patching import installed
from dnsse.frameworks.torch_dist.process_groups import DefaultGroups
from dnsse.frameworks.torch_dist.cpu_devices import MACHINE_HAS_CUDA
from dnsse.frameworks.torch_dist.cuda_streams import close
from dnsse.frameworks.torch_dist.rank_mode import RankMode
from dnsse.frameworks.torch_dist.rank_globals import keep_torch_globals_per_rank
from dnsse.frameworks.torch_dist.stream_hangs import explain_stream_hang
from dnsse.frameworks.torch_dist.streams import wait_for
from dnsse.frameworks.torch_dist.uncontrolled import REFUSED
from dnsse.frameworks.torch_dist.world import LAUNCHES, RankState, World, rank_here
from dnsse.frameworks.threads.patching import controlled_threading
from dnsse.frameworks.threads.process_exit import controlled_process_exit, end_of_process, fresh_executor_registry
from dnsse.frameworks.threads.runtime import runtime_for
from dnsse.frameworks.threads.thread import adopt

_unregister_all_process_groups = torch._C._distributed_c10d._unregister_all_process_groups


# A campaign builds more than one framework (minimizing, replaying): the notice is per process.
_CUDA_NOTICED: list[str] = []


class TorchFramework:
    name = "torch"
    # OS threads: torch keeps grad mode, inference mode and autocast per thread, in C++.
    agents_share_a_thread = False

    def __init__(self, world_size: int) -> None:
        if world_size < 1:
            raise BadInput(f"--world-size must be at least 1, got {world_size}")
        self.world_size = world_size
        # Executions run one at a time in a process (the patched API is global),
        # so only the latest world can still be asked about.
        self._world: World | None = None
        # "gloo", or "nccl" once an execution had a rank asking for NCCL; None before any ran.
        self._semantics: str | None = None
        self._default_groups = DefaultGroups()
        import_refused(REFUSED)  # what activate() patches, imported before the fork server forks workers
        # Its functions take ``group=group.WORLD`` as a default, evaluated when the module is first
        # imported. First imported inside a rank, that default would be that rank's default group for
        # every rank (torch's modules are shared by the ranks here); imported outside any rank it is
        # None, as in a process that imports it before init_process_group, and each call then takes
        # the calling rank's default group. (9 ms, once torch.distributed.rpc is imported.)
        importlib.import_module("torch.distributed.nn.functional")
        # Entry functions that take no rank, by target: they launch ranks themselves (mp.spawn).
        self._launching: dict[str, bool] = {}

    def activate(self) -> ContextManager[None]:
        return _both(installed(self._notice_cuda), controlled_threading(), controlled_process_exit())

    def _notice_cuda(self, what: str) -> None:
        """Say once per process that CUDA and NCCL run on the CPU here."""
        if self._world is not None:
            self._world.cuda_requested = True
        if _CUDA_NOTICED or MACHINE_HAS_CUDA:
            return
        _CUDA_NOTICED.append(what)
        print(
            f"dnsse: the program asks for CUDA or NCCL ({what}); this machine has no CUDA, so every rank runs "
            "on the CPU: the values are the CPU's, the order of operations is the program's",
            file=sys.__stderr__,
        )

    def inputs(self, target: LoadedTarget) -> list[InputParameter]:
        if target.launch is not None:
            return []
        name = str(target.spec)

        def check(function: object) -> None:
            self._launching[name] = _launches_ranks(function, name)

        found = target.entry_point_inputs(check, skip=2)
        if self._launching[name]:
            return target.entry_point_inputs(lambda function: None, skip=0)
        return found

    def start(self, execution: Execution, target: LoadedTarget, inputs: dict[str, object]) -> None:
        _warm_up(target)
        self._fold_semantics()
        self._semantics = self._semantics or "gloo"
        keep_torch_globals_per_rank(execution)
        execution.deadlock_explainers.append(lambda blocked: self._explain(execution, blocked))
        # Each rank is a process of its own: it ends with its own exit callbacks and executors.
        runtime_for(execution).process_of = _rank_number_here
        fresh_executor_registry(execution)
        launch = target.launch
        if launch is None and not self._launching.get(str(target.spec), False):
            groups = self._default_groups
            self._start_ranks(execution, self.world_size, lambda state: _rank_body(target, state, inputs, groups))
            return
        environments = ProcessEnvironments(rank_here)
        execution.on_resume = chained(execution.on_resume, environments.resumed)
        execution.framework_state[PROCESS_STARTER] = start_process
        execution.framework_state[LAUNCHES] = Launches(
            execution,
            lambda size, program_of: self._start_ranks(
                execution, size, lambda state: _launched_rank_body(state, program_of(state), self._default_groups)
            ),
            environments,
        )
        torchrun = launch.torchrun if launch is not None else None
        if torchrun is not None:
            base, directory = dict(os.environ), os.getcwd()

            def script_of(state: RankState) -> Callable[[], None]:
                environments.give(state, torchrun.environment(state.rank, base, directory))
                return _launched_rank_body(state, lambda: run_as_main(target), self._default_groups)

            self._start_ranks(execution, torchrun.world_size, script_of)
            return

        def launcher() -> None:
            # The launching process: the file as __main__, or the entry function; mp.spawn starts the ranks.
            if launch is not None:
                run_as_main(target)
            else:
                module = target.instantiate()
                try:
                    target.entry_point(module)(**target.localize(inputs, module))
                finally:
                    target.release(module)
            end_of_process(execution)

        main = ThreadAgent(execution, "main", launcher)
        runtime = runtime_for(execution)
        runtime.attach(main, adopt(main, runtime, "MainThread"))

    def _start_ranks(
        self, execution: Execution, size: int, body_of: Callable[[RankState], Callable[[], None]]
    ) -> World:
        """A world of ``size`` ranks, each running ``body_of(its state)``."""
        world = World(execution, size, Collectives(), Mailboxes(), dist.HashStore(), self._notice_cuda)
        self._fold_semantics()
        self._world = world
        for rank in range(size):
            agent = ThreadAgent(execution, f"rank {rank}", lambda: None)
            agent.keeps_thread = True  # its body unregisters its groups (see _rank_body)
            state = RankState(world, rank, agent)
            agent.body = body_of(state)
            agent.handle = state
            world.ranks.append(state)
        return world

    def _explain(self, execution: Execution, blocked: list) -> Bug | None:
        world = self._world
        if world is None or world.execution is not execution:
            return None
        return explain_stream_hang(world, blocked) or world.collectives.explain_deadlock(world.ranks, blocked)

    def finish(self, execution: Execution) -> Bug | None:
        self._fold_semantics()
        world, self._world = self._world, None
        if world is None or world.execution is not execution:
            return None
        return world.collectives.unfinished()

    @property
    def semantics(self) -> str | None:
        """The backend semantics the executions so far used: "gloo", "nccl", or None before any ran."""
        self._fold_semantics()
        return self._semantics

    def _fold_semantics(self) -> None:
        if self._world is not None and self._world.semantics == "nccl":
            self._semantics = "nccl"

    def adopt_semantics(self, semantics: str | None) -> None:
        """What executions in another process used (parallel workers)."""
        if semantics == "nccl" or self._semantics is None:
            self._semantics = semantics or self._semantics


# DDP and FSDP import torch._dynamo when first built (seconds): done before the
# first execution starts, its time limit and timings do not pay for it.
_USERS_OF_DYNAMO = ("DistributedDataParallel", "fully_shard", "FullyShardedDataParallel")
_WITHOUT_DYNAMO: set[Path] = set()


def _warm_up(target: LoadedTarget) -> None:
    if "torch._dynamo" not in sys.modules and target.spec.path not in _WITHOUT_DYNAMO:
        source = target.spec.path.read_text(errors="replace")
        if any(name in source for name in _USERS_OF_DYNAMO):
            importlib.import_module("torch._dynamo")
        else:
            _WITHOUT_DYNAMO.add(target.spec.path)  # read once, not at every execution


@contextlib.contextmanager
def _both(*managers: ContextManager[None]) -> Iterator[None]:
    """The controlled torch.distributed, and threading: threads a rank starts are agents too.

    With torch's objects out of the collector's way (see
    dnsse.engine.collector): a 64-rank execution of benchmarks/ranks_speed.py
    met a full collection of 100-130 ms about every third execution.
    """
    with contextlib.ExitStack() as stack:
        for manager in managers:
            stack.enter_context(manager)
        stack.enter_context(old_objects_frozen())
        yield


def _rank_number_here() -> int | None:
    state = rank_here()
    return state.rank if state is not None else None


def _rank_body(
    target: LoadedTarget, state: RankState, inputs: dict[str, object], default_groups: DefaultGroups
) -> Callable[[], None]:
    def body() -> None:
        module = target.instantiate()
        try:
            default_groups.install(state)
            with RankMode(state, cuda_on_cpu=not MACHINE_HAS_CUDA):
                target.entry_point(module)(state.rank, state.world.size, **target.localize(inputs, module))
                end_of_process(state.world.execution)
            state.exiting = True
            # The process ends only when its GPU work has: a stream that hangs keeps it.
            wait_for(state, state.streams.pending(), "its NCCL streams to finish before the process exits")
        finally:
            if state.device is not None:
                close(state.device)
            target.release(module)
            # The rank's process ends, and its groups with it: torch's per-thread registry of group
            # names is left as a new thread has it, for the next execution's rank in this thread.
            _unregister_all_process_groups()

    return body


def _launched_rank_body(
    state: RankState, program: Callable[[], object], default_groups: DefaultGroups
) -> Callable[[], None]:
    """A rank's process that torchrun or mp.spawn started: ``program`` is all it runs (its module included)."""

    def body() -> None:
        try:
            default_groups.install(state)
            with RankMode(state, cuda_on_cpu=not torch.cuda.is_available()):
                program()
                end_of_process(state.world.execution)
            state.exiting = True
            # The process ends only when its GPU work has: a stream that hangs keeps it.
            wait_for(state, state.streams.pending(), "its NCCL streams to finish before the process exits")
        finally:
            _unregister_all_process_groups()

    return body


def _launches_ranks(function: object, name: str) -> bool:
    """False for ``FUNC(rank, world_size, ...)``; True for a function called with nothing (it launches ranks)."""
    try:
        _check_entry_point(function, name)
        return False
    except BadInput as wrong:
        try:
            require_no_positional_parameters(function, name)  # type: ignore[arg-type]
        except BadInput:
            raise wrong from None
        return True


def _check_entry_point(function: object, name: str) -> None:
    try:
        parameters = list(inspect.signature(function).parameters.values())  # type: ignore[arg-type]
    except (TypeError, ValueError):
        parameters = []
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    takes_two = len([p for p in parameters[:2] if p.kind in positional]) == 2 or any(
        p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters[:3]
    )
    if not takes_two:
        raise BadInput(
            f"the torch entry point {name} must take (rank, world_size, ...): dnsse calls it once per rank "
            "as FUNC(rank, world_size, **inputs); add those two parameters first (a function that takes no "
            "parameters is run once, as the process that launches the ranks with mp.spawn)"
        )
