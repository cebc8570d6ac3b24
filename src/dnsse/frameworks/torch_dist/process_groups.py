"""The controlled setup API: init/destroy, ranks, backends and ``new_group``.

Signatures follow torch's, so programs call them unchanged. The default
group exists before the entry point runs; ``init_process_group`` accepts any
backend and init method (no store is contacted) and only checks that the
rank and world size it is given are the ones dnsse runs.
"""

from __future__ import annotations

from typing import Any

from dnsse.engine.execution import current_agent
from dnsse.engine.operation import Access, Operation
from dnsse.frameworks.torch_dist.groups import NON_GROUP_MEMBER, WORLD_NAME, ProcessGroup
from dnsse.frameworks.torch_dist.world import RankState, current_rank


def caller_rank() -> int:
    """Who is asking, for ``ProcessGroup.rank()``."""
    return current_rank("ProcessGroup.rank").rank


def resolve_group(state: RankState, group: object, api: str) -> ProcessGroup | None:
    """The group a call names; ``None`` for torch's non-member sentinel."""
    if group is None:
        return state.world.world_group
    if isinstance(group, ProcessGroup):
        return group
    if isinstance(group, int) and group == NON_GROUP_MEMBER:
        return None
    raise TypeError(f"{api}: group= must be None, dist.group.WORLD or a group from dist.new_group, got {group!r}")


def _member_group(group: object, api: str) -> ProcessGroup:
    state = current_rank(api)
    resolved = resolve_group(state, group, api)
    if resolved is None:
        raise ValueError(f"{api}: the calling rank {state.rank} is not a member of this group")
    return resolved


def peer_of(group: ProcessGroup, peer: int | None, group_peer: int | None, api: str, role: str) -> int:
    """A global rank from torch's ``src=``/``dst=`` or ``group_src=``/``group_dst=``."""
    if group_peer is not None:
        if not 0 <= group_peer < group.size():
            raise ValueError(f"{api}: group_{role}={group_peer} is outside {group}")
        return group.ranks[group_peer]
    if peer is None:
        raise ValueError(f"{api}: give {role}= (a global rank) or group_{role}= (a rank in the group)")
    return peer


def root_of(group: ProcessGroup, peer: int | None, group_peer: int | None, api: str, role: str) -> tuple[int, int]:
    """(index in the group, global rank) of a collective's root."""
    global_rank = peer_of(group, peer, group_peer, api, role)
    index = group.index_of(global_rank)
    if index is None:
        raise ValueError(f"{api}: {role}={global_rank} is not a member of {group}")
    return index, global_rank


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
    if state.init_called and state.initialized:
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
    state.backend = str(backend) if backend else "gloo"
    state.init_called = True
    state.initialized = True


def destroy_process_group(group: object = None) -> None:
    state = current_rank("destroy_process_group")
    if group is None or (isinstance(group, ProcessGroup) and group.name == WORLD_NAME):
        state.initialized = False
        state.init_called = False


def is_initialized() -> bool:
    # Outside control torch internals may ask (samplers, loggers): the honest answer there is no.
    state = getattr(current_agent(), "handle", None)
    return isinstance(state, RankState) and state.initialized


def is_available() -> bool:
    return True


def get_rank(group: object = None) -> int:
    state = current_rank("get_rank")
    resolved = resolve_group(state, group, "get_rank")
    index = None if resolved is None else resolved.index_of(state.rank)
    return -1 if index is None else index


def get_world_size(group: object = None) -> int:
    state = current_rank("get_world_size")
    resolved = resolve_group(state, group, "get_world_size")
    if resolved is None or resolved.index_of(state.rank) is None:
        return -1
    return resolved.size()


def get_backend(group: object = None) -> str:
    return current_rank("get_backend").backend


def new_group(
    ranks: list[int] | None = None,
    timeout: object = None,
    backend: object = None,
    pg_options: object = None,
    use_local_synchronization: bool = False,
    group_desc: object = None,
    device_id: object = None,
    sort_ranks: bool = True,
) -> ProcessGroup | int:
    state = current_rank("new_group")
    world = state.world
    members = tuple(range(world.size)) if ranks is None else tuple(sorted(ranks) if sort_ranks else ranks)
    if len(set(members)) != len(members) or not all(isinstance(r, int) and 0 <= r < world.size for r in members):
        raise ValueError(f"new_group(ranks={ranks!r}): ranks must be distinct integers in 0..{world.size - 1}")
    world.execution.yield_point(state.agent, Operation("new_group", (("pg:groups", Access.SYNC),)))
    state.groups_created += 1
    name = f"g{state.groups_created}"
    known = world.group_members.setdefault(name, members)
    if known != members:
        raise ValueError(
            f"new_group call #{state.groups_created} on rank {state.rank} asked for ranks {list(members)}, but another "
            f"rank asked for {list(known)} in its call #{state.groups_created}; every rank must call new_group "
            "with the same ranks in the same order"
        )
    if state.rank not in members:
        return NON_GROUP_MEMBER
    return ProcessGroup(name, members, caller_rank)


def get_process_group_ranks(group: object) -> list[int]:
    return list(_member_group(group, "get_process_group_ranks").ranks)


def get_global_rank(group: object, group_rank: int) -> int:
    resolved = _member_group(group, "get_global_rank")
    if not 0 <= group_rank < resolved.size():
        raise ValueError(f"get_global_rank: group rank {group_rank} is not in {resolved}")
    return resolved.ranks[group_rank]


def get_group_rank(group: object, global_rank: int) -> int:
    resolved = _member_group(group, "get_group_rank")
    index = resolved.index_of(global_rank)
    if index is None:
        raise ValueError(f"get_group_rank: global rank {global_rank} is not part of {resolved}")
    return index
