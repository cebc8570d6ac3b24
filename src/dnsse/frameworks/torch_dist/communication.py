"""The controlled communication API: collectives and point-to-point.

Each function takes torch's arguments (names and defaults), validates them
the way torch does, and hands a :class:`~.ops.CollectiveCall` to
:mod:`.collectives` or a message to :mod:`.p2p`. Calls on a group the rank is
not in return ``None``, as torch's do.
"""

from __future__ import annotations

from typing import Callable

import torch
from torch.distributed import ReduceOp

from dnsse.frameworks.torch_dist import object_ops, ops
from dnsse.frameworks.torch_dist.groups import ProcessGroup
from dnsse.frameworks.torch_dist.process_groups import peer_of, resolve_group, root_of
from dnsse.frameworks.torch_dist.work import Work
from dnsse.frameworks.torch_dist.world import RankState, current_rank

_SUM = ReduceOp.SUM


def _collective(
    api: str, group: object, async_op: bool, build: Callable[[RankState, ProcessGroup], ops.CollectiveCall]
) -> Work | None:
    state = current_rank(api)
    resolved = resolve_group(state, group, api)
    if resolved is None or resolved.index_of(state.rank) is None:
        return None
    return state.world.collectives.issue(state, resolved, build(state, resolved), async_op)


def _is_root_list(api: str, name: str, value: object, is_root: bool, size: int) -> list[torch.Tensor]:
    if is_root:
        return ops.check_tensor_list(api, name, value, size)
    if value:
        raise ValueError(f"{api}: {name} must NOT be specified on non-root ranks")
    return []


def all_reduce(tensor: torch.Tensor, op: object = _SUM, group: object = None, async_op: bool = False) -> Work | None:
    return _collective(
        "all_reduce", group, async_op, lambda s, g: ops.AllReduce(ops.check_tensor("all_reduce", "tensor", tensor), op)
    )


def broadcast(
    tensor: torch.Tensor,
    src: int | None = None,
    group: object = None,
    async_op: bool = False,
    group_src: int | None = None,
) -> Work | None:
    def build(state: RankState, resolved: ProcessGroup) -> ops.CollectiveCall:
        root, src_rank = root_of(resolved, src, group_src, "broadcast", "src")
        return ops.Broadcast(ops.check_tensor("broadcast", "tensor", tensor), root, src_rank)

    return _collective("broadcast", group, async_op, build)


def reduce(
    tensor: torch.Tensor,
    dst: int | None = None,
    op: object = _SUM,
    group: object = None,
    async_op: bool = False,
    group_dst: int | None = None,
) -> Work | None:
    def build(state: RankState, resolved: ProcessGroup) -> ops.CollectiveCall:
        root, dst_rank = root_of(resolved, dst, group_dst, "reduce", "dst")
        return ops.Reduce(ops.check_tensor("reduce", "tensor", tensor), root, dst_rank, op, dst_rank == state.rank)

    return _collective("reduce", group, async_op, build)


def all_gather(
    tensor_list: list[torch.Tensor], tensor: torch.Tensor, group: object = None, async_op: bool = False
) -> Work | None:
    return _collective(
        "all_gather",
        group,
        async_op,
        lambda s, g: ops.AllGather(
            ops.check_tensor_list("all_gather", "tensor_list", tensor_list, g.size()),
            ops.check_tensor("all_gather", "tensor", tensor),
        ),
    )


def all_gather_into_tensor(
    output_tensor: torch.Tensor, input_tensor: torch.Tensor, group: object = None, async_op: bool = False
) -> Work | None:
    def build(state: RankState, resolved: ProcessGroup) -> ops.CollectiveCall:
        output = ops.check_tensor("all_gather_into_tensor", "output_tensor", output_tensor)
        input = ops.check_tensor("all_gather_into_tensor", "input_tensor", input_tensor)
        if output.numel() != input.numel() * resolved.size():
            raise ValueError(
                f"all_gather_into_tensor: output_tensor has {output.numel()} elements, expected "
                f"{resolved.size()} x {input.numel()} (group size x input size)"
            )
        return ops.AllGatherIntoTensor(output, input)

    return _collective("all_gather_into_tensor", group, async_op, build)


def gather(
    tensor: torch.Tensor,
    gather_list: list[torch.Tensor] | None = None,
    dst: int | None = None,
    group: object = None,
    async_op: bool = False,
    group_dst: int | None = None,
) -> Work | None:
    def build(state: RankState, resolved: ProcessGroup) -> ops.CollectiveCall:
        root, dst_rank = _root_defaulting_to_first(resolved, dst, group_dst, "gather", "dst")
        outputs = _is_root_list("gather", "gather_list", gather_list, dst_rank == state.rank, resolved.size())
        return ops.Gather(ops.check_tensor("gather", "tensor", tensor), outputs, root, dst_rank)

    return _collective("gather", group, async_op, build)


def _root_defaulting_to_first(
    group: ProcessGroup, rank: int | None, group_rank: int | None, op: str, role: str
) -> tuple[int, int]:
    """torch lets gather and scatter leave out their root: it is then the group's first rank."""
    if rank is None and group_rank is None:
        return root_of(group, group.ranks[0], None, op, role)
    return root_of(group, rank, group_rank, op, role)


def scatter(
    tensor: torch.Tensor,
    scatter_list: list[torch.Tensor] | None = None,
    src: int | None = None,
    group: object = None,
    async_op: bool = False,
    group_src: int | None = None,
) -> Work | None:
    def build(state: RankState, resolved: ProcessGroup) -> ops.CollectiveCall:
        root, src_rank = _root_defaulting_to_first(resolved, src, group_src, "scatter", "src")
        inputs = _is_root_list("scatter", "scatter_list", scatter_list, src_rank == state.rank, resolved.size())
        return ops.Scatter(ops.check_tensor("scatter", "tensor", tensor), inputs, root, src_rank)

    return _collective("scatter", group, async_op, build)


def reduce_scatter(
    output: torch.Tensor,
    input_list: list[torch.Tensor],
    op: object = _SUM,
    group: object = None,
    async_op: bool = False,
) -> Work | None:
    return _collective(
        "reduce_scatter",
        group,
        async_op,
        lambda s, g: ops.ReduceScatter(
            ops.check_tensor("reduce_scatter", "output", output),
            ops.check_tensor_list("reduce_scatter", "input_list", input_list, g.size()),
            op,
        ),
    )


def reduce_scatter_tensor(
    output: torch.Tensor, input: torch.Tensor, op: object = _SUM, group: object = None, async_op: bool = False
) -> Work | None:
    def build(state: RankState, resolved: ProcessGroup) -> ops.CollectiveCall:
        out = ops.check_tensor("reduce_scatter_tensor", "output", output)
        inp = ops.check_tensor("reduce_scatter_tensor", "input", input)
        if inp.numel() != out.numel() * resolved.size():
            raise ValueError(
                f"reduce_scatter_tensor: input has {inp.numel()} elements, expected "
                f"{resolved.size()} x {out.numel()} (group size x output size)"
            )
        return ops.ReduceScatterTensor(out, inp, op)

    return _collective("reduce_scatter_tensor", group, async_op, build)


def all_to_all(
    output_tensor_list: list[torch.Tensor],
    input_tensor_list: list[torch.Tensor],
    group: object = None,
    async_op: bool = False,
) -> Work | None:
    return _collective(
        "all_to_all",
        group,
        async_op,
        lambda s, g: ops.AllToAll(
            ops.check_tensor_list("all_to_all", "output_tensor_list", output_tensor_list, g.size()),
            ops.check_tensor_list("all_to_all", "input_tensor_list", input_tensor_list, g.size()),
        ),
    )


def all_to_all_single(
    output: torch.Tensor,
    input: torch.Tensor,
    output_split_sizes: list[int] | None = None,
    input_split_sizes: list[int] | None = None,
    group: object = None,
    async_op: bool = False,
) -> Work | None:
    return _collective(
        "all_to_all_single",
        group,
        async_op,
        lambda s, g: ops.AllToAllSingle(
            ops.check_tensor("all_to_all_single", "output", output),
            ops.check_tensor("all_to_all_single", "input", input),
            output_split_sizes,
            input_split_sizes,
        ),
    )


def barrier(
    group: object = None, async_op: bool = False, device_ids: object = None, timeout: object = None
) -> Work | None:
    return _collective("barrier", group, async_op, lambda s, g: ops.Barrier())


def monitored_barrier(group: object = None, timeout: object = None, wait_all_ranks: bool = False) -> None:
    _collective("monitored_barrier", group, False, lambda s, g: ops.Barrier())


def all_gather_object(object_list: list, obj: object, group: object = None) -> None:
    def build(state: RankState, resolved: ProcessGroup) -> ops.CollectiveCall:
        if not isinstance(object_list, list) or len(object_list) < resolved.size():
            raise ValueError(f"all_gather_object: object_list must be a list of at least {resolved.size()} entries")
        return object_ops.AllGatherObject(object_list, obj)

    _collective("all_gather_object", group, False, build)


def broadcast_object_list(
    object_list: list, src: int | None = None, group: object = None, device: object = None, group_src: int | None = None
) -> None:
    def build(state: RankState, resolved: ProcessGroup) -> ops.CollectiveCall:
        root, src_rank = root_of(
            resolved, 0 if src is None and group_src is None else src, group_src, "broadcast_object_list", "src"
        )
        return object_ops.BroadcastObjectList(object_list, root, src_rank, src_rank == state.rank)

    _collective("broadcast_object_list", group, False, build)


def gather_object(
    obj: object,
    object_gather_list: list | None = None,
    dst: int | None = None,
    group: object = None,
    group_dst: int | None = None,
) -> None:
    def build(state: RankState, resolved: ProcessGroup) -> ops.CollectiveCall:
        root, dst_rank = root_of(
            resolved, 0 if dst is None and group_dst is None else dst, group_dst, "gather_object", "dst"
        )
        if dst_rank == state.rank and (
            not isinstance(object_gather_list, list) or len(object_gather_list) < resolved.size()
        ):
            raise ValueError(
                f"gather_object: on the destination rank object_gather_list must be a list of {resolved.size()} entries"
            )
        return object_ops.GatherObject(obj, object_gather_list if dst_rank == state.rank else None, root, dst_rank)

    _collective("gather_object", group, False, build)


def scatter_object_list(
    scatter_object_output_list: list,
    scatter_object_input_list: list | None = None,
    src: int | None = None,
    group: object = None,
    group_src: int | None = None,
) -> None:
    def build(state: RankState, resolved: ProcessGroup) -> ops.CollectiveCall:
        root, src_rank = root_of(
            resolved, 0 if src is None and group_src is None else src, group_src, "scatter_object_list", "src"
        )
        if not isinstance(scatter_object_output_list, list) or not scatter_object_output_list:
            raise ValueError("scatter_object_list: scatter_object_output_list must be a non-empty list")
        inputs = scatter_object_input_list if src_rank == state.rank else None
        if src_rank == state.rank and (not isinstance(inputs, list) or len(inputs) < resolved.size()):
            raise ValueError(
                f"scatter_object_list: on the source rank scatter_object_input_list must hold {resolved.size()} objects"
            )
        return object_ops.ScatterObjectList(scatter_object_output_list, inputs, root, src_rank)

    _collective("scatter_object_list", group, False, build)


def _p2p(api: str, group: object) -> tuple[RankState, ProcessGroup | None]:
    state = current_rank(api)
    resolved = resolve_group(state, group, api)
    if resolved is not None and resolved.index_of(state.rank) is None:
        resolved = None
    return state, resolved


def send(
    tensor: torch.Tensor, dst: int | None = None, group: object = None, tag: int = 0, group_dst: int | None = None
) -> None:
    state, resolved = _p2p("send", group)
    if resolved is not None:
        peer = peer_of(resolved, dst, group_dst, "send", "dst")
        state.world.mailboxes.send(
            state, resolved, peer, tag, ops.check_tensor("send", "tensor", tensor), "send", False
        )


def isend(
    tensor: torch.Tensor, dst: int | None = None, group: object = None, tag: int = 0, group_dst: int | None = None
) -> Work | None:
    state, resolved = _p2p("isend", group)
    if resolved is None:
        return None
    peer = peer_of(resolved, dst, group_dst, "isend", "dst")
    message = state.world.mailboxes.send(
        state, resolved, peer, tag, ops.check_tensor("isend", "tensor", tensor), "isend", True
    )
    return Work(state, message)


def _source(resolved: ProcessGroup, src: int | None, group_src: int | None, api: str) -> int | None:
    if src is None and group_src is None:
        return None
    return peer_of(resolved, src, group_src, api, "src")


def recv(
    tensor: torch.Tensor, src: int | None = None, group: object = None, tag: int = 0, group_src: int | None = None
) -> int:
    state, resolved = _p2p("recv", group)
    if resolved is None:
        return -1
    buffer = ops.check_tensor("recv", "tensor", tensor)
    receive = state.world.mailboxes.receive(
        state, resolved, _source(resolved, src, group_src, "recv"), tag, buffer, "recv", False
    )
    return receive.source  # type: ignore[return-value]


def irecv(
    tensor: torch.Tensor, src: int | None = None, group: object = None, tag: int = 0, group_src: int | None = None
) -> Work | None:
    state, resolved = _p2p("irecv", group)
    if resolved is None:
        return None
    buffer = ops.check_tensor("irecv", "tensor", tensor)
    receive = state.world.mailboxes.receive(
        state, resolved, _source(resolved, src, group_src, "irecv"), tag, buffer, "irecv", True
    )
    return Work(state, receive)


def send_object_list(
    object_list: list,
    dst: int | None = None,
    group: object = None,
    device: object = None,
    group_dst: int | None = None,
    use_batch: bool = False,
) -> None:
    state, resolved = _p2p("send_object_list", group)
    if resolved is not None:
        peer = peer_of(resolved, dst, group_dst, "send_object_list", "dst")
        state.world.mailboxes.send(state, resolved, peer, 0, list(object_list), "send_object_list", False)


def recv_object_list(
    object_list: list,
    src: int | None = None,
    group: object = None,
    device: object = None,
    group_src: int | None = None,
    use_batch: bool = False,
) -> int:
    state, resolved = _p2p("recv_object_list", group)
    if resolved is None:
        return -1
    source = _source(resolved, src, group_src, "recv_object_list")
    receive = state.world.mailboxes.receive(state, resolved, source, 0, object_list, "recv_object_list", False)
    return receive.source  # type: ignore[return-value]


class P2POp:
    """One operation of a ``batch_isend_irecv`` call, as torch builds it."""

    def __init__(
        self,
        op: Callable,
        tensor: torch.Tensor,
        peer: int | None = None,
        group: object = None,
        tag: int = 0,
        group_peer: int | None = None,
    ) -> None:
        if getattr(op, "__name__", None) not in ("isend", "irecv"):
            raise ValueError(
                "Invalid ``op``. Expected ``op`` to be of type ``torch.distributed.isend`` "
                "or ``torch.distributed.irecv``."
            )
        self.op, self.tensor, self.peer = op, tensor, peer
        self.group, self.tag, self.group_peer = group, tag, group_peer


def batch_isend_irecv(p2p_op_list: list[P2POp]) -> list[Work]:
    if not isinstance(p2p_op_list, list) or not p2p_op_list or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("batch_isend_irecv: expected a non-empty list of dist.P2POp")
    works = []
    for p2p in p2p_op_list:
        if p2p.op.__name__ == "isend":
            work = isend(p2p.tensor, p2p.peer, p2p.group, p2p.tag, group_dst=p2p.group_peer)
        else:
            work = irecv(p2p.tensor, p2p.peer, p2p.group, p2p.tag, group_src=p2p.group_peer)
        if work is not None:
            works.append(work)
    return works
