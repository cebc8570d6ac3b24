"""The torch framework: ``FUNC(rank, world_size, **inputs)`` on controlled ranks.

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
import sys
from pathlib import Path
from typing import Callable, ContextManager, Iterator

import torch
import torch.distributed as dist

from dnsse.engine.agent import ThreadAgent
from dnsse.engine.bugs import Bug
from dnsse.engine.collector import old_objects_frozen
from dnsse.engine.execution import Execution
from dnsse.engine.target import InputParameter, LoadedTarget
from dnsse.engine.uncontrolled import import_refused
from dnsse.errors import BadInput
from dnsse.frameworks.torch_dist.collectives import Collectives
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
from dnsse.frameworks.torch_dist.world import RankState, World, rank_here
from dnsse.frameworks.threads.patching import controlled_threading
from dnsse.frameworks.threads.process_exit import controlled_process_exit, end_of_process, fresh_executor_registry
from dnsse.frameworks.threads.runtime import runtime_for

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
        return target.entry_point_inputs(lambda function: _check_entry_point(function, str(target.spec)), skip=2)

    def start(self, execution: Execution, target: LoadedTarget, inputs: dict[str, object]) -> None:
        _warm_up(target)
        world = World(execution, self.world_size, Collectives(), Mailboxes(), dist.HashStore(), self._notice_cuda)
        self._fold_semantics()
        self._semantics = self._semantics or "gloo"
        self._world = world
        keep_torch_globals_per_rank(execution)
        execution.deadlock_explainers.append(lambda blocked: explain_stream_hang(world, blocked))
        execution.deadlock_explainers.append(lambda blocked: world.collectives.explain_deadlock(world.ranks, blocked))
        # Each rank is a process of its own: it ends with its own exit callbacks and executors.
        runtime_for(execution).process_of = _rank_number_here
        fresh_executor_registry(execution)
        for rank in range(self.world_size):
            agent = ThreadAgent(execution, f"rank {rank}", lambda: None)
            agent.keeps_thread = True  # its body unregisters its groups (see _rank_body)
            state = RankState(world, rank, agent)
            agent.body = _rank_body(target, state, inputs, self._default_groups)
            agent.handle = state
            world.ranks.append(state)

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
            "as FUNC(rank, world_size, **inputs); add those two parameters first"
        )
