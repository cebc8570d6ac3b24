"""The state of one execution's controlled world, and how a call finds its rank.

Each rank's :class:`~dnsse.engine.agent.ThreadAgent` carries its
:class:`RankState` as ``handle``; the patched functions reach the world
through the agent running on the calling thread, so nothing is global and
executions cannot leak into each other.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dnsse.engine.execution import current_agent
from dnsse.engine.location import frame_location
from dnsse.frameworks.torch_dist.groups import ProcessGroup

if TYPE_CHECKING:
    from dnsse.engine.agent import ThreadAgent
    from dnsse.engine.execution import Execution
    from dnsse.frameworks.torch_dist.collectives import Collectives, Instance
    from dnsse.frameworks.torch_dist.p2p import Mailboxes


@dataclass(eq=False)
class RankState:
    """One rank's view of the world."""

    world: World
    rank: int
    agent: ThreadAgent
    backend: str = "gloo"
    initialized: bool = True  # the default group exists before FUNC runs
    init_called: bool = False
    groups_created: int = 0
    # The collective this rank is blocked in, for the deadlock explainer.
    waiting_in: Instance | None = None


@dataclass(eq=False)
class World:
    """Everything ranks share in one execution: groups, collectives, mailboxes."""

    execution: Execution
    size: int
    world_group: ProcessGroup
    collectives: Collectives
    mailboxes: Mailboxes
    ranks: list[RankState] = field(default_factory=list)
    # new_group calls by position: every rank must ask for the same members.
    group_members: dict[str, tuple[int, ...]] = field(default_factory=dict)


def current_rank(api: str) -> RankState:
    """The calling rank; a clear error when the caller is not a controlled rank."""
    agent = current_agent()
    state = getattr(agent, "handle", None)
    if not isinstance(state, RankState):
        raise RuntimeError(
            f"torch.distributed.{api} was called outside a rank that dnsse controls; while dnsse "
            "checks a torch program, call torch.distributed only from the ranks' entry point "
            "(and code it calls), not from other threads or at the top level of the file"
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
