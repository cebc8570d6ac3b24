"""The state of one execution's controlled world, and how a call finds its rank.

Each rank's :class:`~dnsse.engine.agent.ThreadAgent` carries its
:class:`RankState` as ``handle``; the patched functions reach the world
through the agent running on the calling thread, so nothing is global and
executions cannot leak into each other.
"""

from __future__ import annotations

import _thread
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from dnsse.engine.execution import ExecutionAborted, current_agent
from dnsse.engine.location import frame_location
from dnsse.frameworks.torch_dist.streams import Streams

if TYPE_CHECKING:
    from dnsse.frameworks.torch_dist.guard import Unsettled
    from dnsse.frameworks.torch_dist.groups import Group
    from dnsse.engine.agent import ThreadAgent
    from dnsse.engine.execution import Execution
    from dnsse.frameworks.torch_dist.collectives import Collectives, Instance
    from dnsse.frameworks.torch_dist.p2p import Mailboxes
    from dnsse.frameworks.torch_dist.virtual_device import RankDevice


@dataclass(eq=False)
class C10dState:
    """What ``torch.distributed`` keeps per process (its ``_World``), kept per rank.

    torch keeps it in module globals; :mod:`.c10d_world` routes each rank's
    reads and writes here, as if each rank were its own process.
    """

    default_pg: object = None
    pg_map: dict = field(default_factory=dict)
    pg_names: dict = field(default_factory=dict)
    pg_group_ranks: dict = field(default_factory=dict)
    pg_backend_config: dict = field(default_factory=dict)
    group_count: int = 0
    tags_to_pg: dict = field(default_factory=dict)
    pg_to_tag: dict = field(default_factory=dict)
    pg_coalesce_state: dict = field(default_factory=dict)
    comms: list = field(default_factory=list)


@dataclass(eq=False)
class RankState:
    """One rank's view of the world."""

    world: World
    rank: int
    # The rank's own thread; threads and asyncio tasks it starts act for it too (see `agent`).
    main_agent: ThreadAgent
    c10d: C10dState = field(default_factory=C10dState)
    # The backend the program asked for: its semantics are the ones modelled.
    backend: str = "gloo"
    init_called: bool = False
    # The backend the new_group being created now named (see process_groups.new_process_group_helper).
    asked_backend: str | None = None
    # Output buffers of this rank's async operations not yet waited for.
    unsettled: list[Unsettled] = field(default_factory=list)
    # The collective this rank is blocked in, for the deadlock explainer.
    waiting_in: Instance | None = None
    # Its NCCL streams (unused under gloo semantics).
    streams: Streams = field(default_factory=Streams)
    # Its entry point returned; under NCCL it waits for its streams before the process ends.
    exiting: bool = False
    # Async operations whose futures C++ holds during this backward pass (see Work.get_future).
    backward_works: list = field(default_factory=list)
    # The Work every synchronous collective of the rank returns (see work.synchronous_work).
    synchronous_work: object = None
    # Its virtual CUDA device, once the program used one (see .virtual_device).
    device: RankDevice | None = None

    @property
    def agent(self) -> ThreadAgent:
        """The agent acting for this rank now: a thread or asyncio task the rank started, or the rank itself.

        Scheduling points of a rank's operation park the agent that made
        the call, so a task awaiting nothing but a collective blocks alone.
        """
        agent = current_agent()
        if agent is not None and agent is not self.main_agent and rank_here() is self:
            return agent
        return self.main_agent


@dataclass(eq=False)
class World:
    """Everything ranks share in one execution: collectives, mailboxes, group members."""

    execution: Execution
    size: int
    collectives: Collectives
    mailboxes: Mailboxes
    # The store torch's group set-up writes to; nothing ever waits on it.
    store: object
    # Called with what the program asked for when it names CUDA or NCCL.
    on_cuda_request: Callable[[str], None]
    ranks: list[RankState] = field(default_factory=list)
    # Groups by name: every rank must create the same groups in the same order.
    groups: dict[str, Group] = field(default_factory=dict)
    # "nccl" once a rank asked for NCCL's semantics (see .streams), else "gloo".
    semantics: str = "gloo"
    # Whether the program asked for CUDA or NCCL, which this machine runs on the CPU (see .cpu_devices).
    cuda_requested: bool = False


def choose_backend(state: RankState, backend: str) -> None:
    """The backend a rank asked for its default group; its semantics are the ones modelled for it."""
    state.backend = backend
    if "nccl" in backend:
        state.world.semantics = "nccl"



# Where an execution of a launched program keeps its launcher (dnsse.frameworks.torch_dist.launcher).
LAUNCHES = "torch.launches"

# Per OS thread, hence per agent: the rank a thread or asyncio task started by a rank acts for.
_started_by = _thread._local()


def act_for(state: RankState) -> None:
    """The calling agent, a thread or task the rank started, belongs to the rank's process: it acts for it."""
    _started_by.state = state


def rank_here() -> RankState | None:
    """The rank the calling agent acts for: its own, or the one whose process started its thread or task."""
    state = getattr(current_agent(), "handle", None)
    if isinstance(state, RankState):
        return state
    return getattr(_started_by, "state", None)


def current_rank(api: str) -> RankState:
    """The calling rank; a clear error when the caller is not a controlled rank."""
    state = rank_here()
    if state is None:
        agent = current_agent()
        if agent is not None and LAUNCHES in agent.execution.framework_state:
            # The launching process of `python FILE.py`: no rank, and no environment to make it one.
            agent.execution.refuse(
                f"torch.distributed.{api} was called by the process that launches the program, which is no rank "
                "(at " + call_site(agent.execution.source_files) + "): dnsse runs `python FILE.py`, and an entry "
                "function that takes no rank, as one process, whose ranks are those it starts with "
                "torch.multiprocessing.spawn or one mp.Process per rank. Give dnsse the command that starts the ranks "
                "for real, `dnsse check -- torchrun --nproc-per-node N FILE.py ARGS`, or an entry function "
                "FUNC(rank, world_size)"
            )
            raise ExecutionAborted()
        raise RuntimeError(
            f"torch.distributed.{api} was called outside a rank that dnsse controls; while dnsse "
            "checks a torch program, call torch.distributed only from the ranks' entry point "
            "(and code it calls, threads and asyncio tasks it starts), not at the top level of the file"
        )
    return state


def call_site(source_files: frozenset[str]) -> str:
    """``file:line`` of the innermost frame of the program under test."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename in source_files:
            return frame_location(frame)
        frame = frame.f_back
    return "an unknown place"
