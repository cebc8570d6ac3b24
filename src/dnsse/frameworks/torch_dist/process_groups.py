"""The parts of torch's setup API that dnsse replaces: init, destroy, backend, split.

Everything else (``new_group``, ``new_subgroups``, ``get_rank``, DeviceMesh...)
is torch's own code running on each rank's :class:`~.world.C10dState`. The
default group exists before the entry point runs; the program's own
``init_process_group`` (any backend, any init method: no store is contacted)
binds to it and only checks that the rank and world size it is given are the
ones dnsse runs. ``split_group`` needs an accelerator in torch; here it is the
same groups made with ``new_group``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import torch
from torch.distributed import distributed_c10d

from dnsse.engine.operation import Access, Operation
from dnsse.frameworks.torch_dist.backend import ControlledProcessGroup
from dnsse.frameworks.torch_dist.c10d_world import BACKEND
from dnsse.frameworks.torch_dist.world import C10dState, RankState, choose_backend, current_rank, rank_here

# torch's own, taken before the campaign replaces the module's names.
_torch_init_process_group = distributed_c10d.init_process_group
_torch_destroy_process_group = distributed_c10d.destroy_process_group
_torch_new_group = distributed_c10d.new_group
_torch_new_process_group_helper = distributed_c10d._new_process_group_helper


def create_default_group(state: RankState) -> None:
    """What a rank's process has before its entry point runs: the default group."""
    world = state.world
    _torch_init_process_group(backend=BACKEND, store=world.store, rank=state.rank, world_size=world.size)


@dataclass
class _Made:
    """A rank's torch state right after its default group was created, to start the next executions from."""

    group: ControlledProcessGroup
    torch_state: C10dState


class DefaultGroups:
    """Each rank's default group, made by torch once per campaign and handed to every execution.

    torch's ``init_process_group`` costs about 0.3 ms of Python per rank
    (logging wrappers, naming, tag maps), more than the rest of a rank's
    set-up. What it leaves in the rank's :class:`~.world.C10dState` is the
    same in every execution, so later executions get a copy of those maps
    around the same group object, rebound to their rank; the copies are
    fresh, so groups an execution creates or destroys never reach the next.
    With ``TORCH_DIST_INIT_BARRIER=1`` torch would meet the other ranks in
    the store at init: then each execution makes its groups anew.
    """

    def __init__(self) -> None:
        self._made: dict[int, _Made] = {}

    def install(self, state: RankState) -> None:
        """Give ``state``'s rank its default group, as ``create_default_group`` would; on the rank's own thread."""
        made = self._made.get(state.rank)
        if made is None or made.group.destroyed or distributed_c10d._is_barrier_after_init() == 1:
            create_default_group(state)
            group = state.c10d.default_pg
            if isinstance(group, ControlledProcessGroup):
                self._made[state.rank] = _Made(group, _copied(state.c10d))
            return
        group = made.group
        group.state = state
        # A rank whose group was destroyed made a new one this execution: every rank shares the execution's.
        group.group = state.world.groups.setdefault(group.group.name, group.group)
        state.c10d = _copied(made.torch_state)
        # What torch's _register_pg_in_world and _update_default_pg do besides filling the maps: the
        # group-name registry is per thread here (thread isolation mode), the global rank is for logs.
        torch._C._distributed_c10d._register_process_group(state.c10d.pg_names[group], group)
        torch._C._distributed_c10d._set_global_rank(state.rank)


def _copied(torch_state: C10dState) -> C10dState:
    """A copy whose maps and lists are the copy's own, around the same group objects."""
    return C10dState(
        default_pg=torch_state.default_pg,
        pg_map=dict(torch_state.pg_map),
        pg_names=dict(torch_state.pg_names),
        pg_group_ranks={group: dict(ranks) for group, ranks in torch_state.pg_group_ranks.items()},
        pg_backend_config=dict(torch_state.pg_backend_config),
        group_count=torch_state.group_count,
        tags_to_pg={tag: list(groups) for tag, groups in torch_state.tags_to_pg.items()},
        pg_to_tag=dict(torch_state.pg_to_tag),
        pg_coalesce_state=dict(torch_state.pg_coalesce_state),
        comms=list(torch_state.comms),
    )


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout: object = None,
    world_size: int = -1,
    rank: int = -1,
    store: object = None,
    group_name: str = "",
    pg_options: object = None,
    device_id: object = None,
    **_: Any,
) -> None:
    state = current_rank("init_process_group")
    if state.init_called:
        raise ValueError("trying to initialize the default process group twice!")
    size = state.world.size
    if world_size not in (-1, None) and world_size != size:
        raise ValueError(
            f"init_process_group(world_size={world_size}) on rank {state.rank}, but dnsse runs this program "
            f"with {size} ranks; pass the world_size the entry point receives (or use --world-size {world_size})"
        )
    if rank not in (-1, None) and rank != state.rank:
        raise ValueError(
            f"init_process_group(rank={rank}) was called by rank {state.rank}; pass the rank the entry point receives"
        )
    state.world.execution.yield_point(state.agent, Operation("init_process_group", (("pg:WORLD", Access.SYNC),)))
    choose_backend(state, str(backend).lower() if backend else "gloo")
    if "nccl" in state.backend:
        state.world.on_cuda_request(f'init_process_group("{backend}")')
    state.init_called = True
    if state.c10d.default_pg is None:
        create_default_group(state)


def destroy_process_group(group: object = None) -> None:
    state = current_rank("destroy_process_group")
    for destroyed in list(state.c10d.pg_map) if group is None else [group]:
        if isinstance(destroyed, ControlledProcessGroup):
            destroyed.destroyed = True
    _torch_destroy_process_group(group)
    if state.c10d.default_pg is None:
        state.init_called = False


def get_backend(group: object = None) -> str:
    """The backend the program asked for the group (or the default group), whose semantics dnsse models."""
    state = current_rank("get_backend")
    named = group.group.backend if isinstance(group, ControlledProcessGroup) else None
    return named or state.backend


def new_process_group_helper(
    group_size: int, group_rank: int, global_ranks_in_group: list, backend: object, *args: Any, **kwargs: Any
) -> Any:
    """torch's group factory, with every backend the ``dnsse`` one; the group remembers the backend named.

    ``new_group(ranks, backend="nccl" | "gloo")`` (and what calls it:
    ``new_subgroups``, DeviceMesh) gives that group the named backend's
    semantics, whatever the default group's are.
    """
    state = rank_here()
    name = str(backend).lower() if backend else BACKEND
    if state is None or name == BACKEND:
        return _torch_new_process_group_helper(group_size, group_rank, global_ranks_in_group, backend, *args, **kwargs)
    state.asked_backend = name
    try:
        return _torch_new_process_group_helper(group_size, group_rank, global_ranks_in_group, BACKEND, *args, **kwargs)
    finally:
        state.asked_backend = None


def split_group(
    parent_pg: object = None,
    split_ranks: list | None = None,
    timeout: object = None,
    pg_options: object = None,
    group_desc: str | None = None,
    backend: object = None,
) -> object:
    """torch's ``split_group``: every parent member calls it; each gets the split it is in, or ``None``."""
    state = current_rank("split_group")
    if not split_ranks:
        raise ValueError("split_ranks cannot be None or empty")
    parent = parent_pg if parent_pg is not None else state.c10d.default_pg
    to_global = {group_rank: rank for rank, group_rank in state.c10d.pg_group_ranks[parent].items()}
    mine = None
    for split in split_ranks:
        if not split or len(split) != len(set(split)):
            raise ValueError("split_group: each split must be a non-empty list of distinct ranks")
        members = sorted(to_global[r] for r in split)
        made = _torch_new_group(members, timeout=timeout, group_desc=group_desc, backend=backend)
        if state.rank in members:
            mine = made
    return mine


REPLACEMENTS: dict[str, Callable[..., Any]] = {
    "init_process_group": init_process_group,
    "destroy_process_group": destroy_process_group,
    "get_backend": get_backend,
    "split_group": split_group,
}
