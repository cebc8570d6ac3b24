"""torch.distributed's per-process state, per rank, and the ``dnsse`` backend.

Ranks are threads of one process, but torch keeps its process-group state
(the default group, the group maps, the group counter) in module globals.
:class:`RankLocalWorld` replaces ``distributed_c10d._world`` for a campaign
and routes every read and write to the calling rank's
:class:`~.world.C10dState`, as torch's own multi-threaded test group does, so
each rank sees what its process would. Outside a rank nothing is initialized.

The ``dnsse`` backend is registered with ``Backend.register_backend``; torch
calls :func:`create_process_group` for the default group and for every
``new_group``, and that returns a :class:`~.backend.ControlledProcessGroup`.
"""

from __future__ import annotations

from typing import Any

import torch.distributed as dist
from torch.distributed import distributed_c10d

from dnsse.frameworks.torch_dist.backend import ControlledProcessGroup
from dnsse.frameworks.torch_dist.groups import Group, group_name
from dnsse.frameworks.torch_dist.world import C10dState, current_rank, rank_here

BACKEND = "dnsse"


def _rank_property(name: str) -> property:
    def get(world: RankLocalWorld) -> Any:
        return getattr(world.state(), name)

    def set_(world: RankLocalWorld, value: Any) -> None:
        setattr(world.state(), name, value)

    return property(get, set_)


class RankLocalWorld(distributed_c10d._World):
    """``distributed_c10d._world`` with one state per controlled rank."""

    def __init__(self) -> None:
        # Deliberately not calling _World.__init__: its fields live in C10dState.
        self._outside = C10dState()

    def state(self) -> C10dState:
        rank = rank_here()
        return rank.c10d if rank is not None else self._outside

    default_pg = _rank_property("default_pg")
    pg_map = _rank_property("pg_map")
    pg_names = _rank_property("pg_names")
    pg_group_ranks = _rank_property("pg_group_ranks")
    pg_backend_config = _rank_property("pg_backend_config")
    group_count = _rank_property("group_count")
    tags_to_pg = _rank_property("tags_to_pg")
    pg_to_tag = _rank_property("pg_to_tag")
    pg_coalesce_state = _rank_property("pg_coalesce_state")
    comms = _rank_property("comms")


def create_process_group(options: Any, backend_options: Any) -> ControlledProcessGroup:
    """torch's backend factory (extended API): the calling rank's object for one group."""
    state = current_rank("new_group")
    given = [int(rank) for rank in options.global_ranks_in_group]
    ranks = given or list(range(state.world.size))
    name = group_name(str(options.group_id), given)
    asked = state.asked_backend
    known = state.world.groups.setdefault(name, Group(name, ranks, asked))
    if list(known.ranks) != ranks:
        raise ValueError(
            f"group {name} was created with ranks {list(known.ranks)} on another rank but with {ranks} on rank "
            f"{state.rank}; every rank must create the same groups, with the same ranks, in the same order"
        )
    if known.backend != asked:
        raise ValueError(
            f"group {name} was created with backend={known.backend!r} on another rank but with backend={asked!r} "
            f"on rank {state.rank}; every rank must create a group with the same backend"
        )
    if asked is not None and "nccl" in asked:
        state.world.semantics = "nccl"
        state.world.on_cuda_request(f'new_group(backend="{asked}")')
    return ControlledProcessGroup(state, known)


def register_backend() -> None:
    """Make ``dnsse`` a backend torch knows (once per process; torch cannot forget one)."""
    if BACKEND.upper() not in dist.Backend._plugins:
        dist.Backend.register_backend(BACKEND, create_process_group, extended_api=True, devices=["cpu", "cuda"])
