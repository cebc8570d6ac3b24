"""Plain collectives straight to the scheduler, for the calls torch's API would only pass along.

A rank's ``dist.all_reduce(tensor)`` reaches :func:`.rank_mode.handle_c10d`
(torch function dispatch), which calls torch's ``all_reduce`` again with the
rank's mode off; that checks the tensor, builds an ``AllreduceOptions``,
finds the default group and calls the group's ``allreduce`` through
pybind11, which calls :class:`~.backend.ControlledProcessGroup` back in
Python, which reads the options and the caller's frames to learn what the
call already said, then issues the collective. For the plain case (dense
tensors of no subclass but ``Parameter``, real dtypes, no other torch function mode, a
reduction of ``ReduceOp``, a root given as a global rank of the group, the
default group or one of dnsse's, no coalescing, gloo's semantics, a boolean
``async_op``) the functions here issue the same collective with the same
arguments and return what torch's function returns: about a quarter of a
synchronous collective's CPU. Any other case returns :data:`NotImplemented`,
and torch's own path runs, with its own checks and messages.

They run with the rank's mode off, as torch runs the mode's handler: the
tensors' metadata they read, and the issue, are plain calls.

``all_reduce``, ``broadcast``, ``reduce``, ``all_gather`` and
``reduce_scatter_single`` (which ``reduce_scatter_tensor`` calls) take it.
``barrier`` passes no tensor, so it never reaches torch function dispatch.
"""

from __future__ import annotations

import inspect
from typing import Callable

import torch
import torch.distributed
from torch.distributed import distributed_c10d

from dnsse.frameworks.torch_dist import ops
from dnsse.frameworks.torch_dist.backend import ControlledProcessGroup
from dnsse.frameworks.torch_dist.streams import uses_nccl

_STRIDED = torch.strided
_RED_OP = torch.distributed.ReduceOp.RedOpType


# A Parameter disables torch function dispatch for itself: torch treats it as a plain tensor.
_PLAIN_TYPES = (torch.Tensor, torch.nn.Parameter)


def _plain(tensor: object) -> bool:
    """A dense tensor of no other subclass and a real dtype: torch passes it to the backend as it is."""
    return type(tensor) in _PLAIN_TYPES and tensor.layout is _STRIDED and not tensor.is_complex()  # type: ignore[attr-defined]


def _fp8(tensor: object) -> bool:
    dtype = tensor.dtype  # type: ignore[attr-defined]
    return dtype.is_floating_point and dtype.itemsize == 1


def _group(group: object, async_op: object) -> ControlledProcessGroup | None:
    """The controlled group torch would hand the call to, when nothing else would see or change it."""
    if type(async_op) is not bool:
        return None  # torch's backend learns a non-bool async_op's meaning from its frames
    if group is None:
        group = distributed_c10d._world.default_pg  # None before init_process_group: torch's path raises
    if type(group) is not ControlledProcessGroup:
        return None  # no default group, a group this rank is not a member of, or a wrapped one
    if uses_nccl(group.state, group.group) or group in distributed_c10d._world.pg_coalesce_state:
        # NCCL: the Work's wait() must come from torch's API (see streams.waits_on_stream).
        return None
    return group


def _root(group: ControlledProcessGroup, rank: object, group_rank: object) -> tuple[int, int] | None:
    """(group rank, global rank) of a collective's root given as torch's ``src``/``dst``, as torch finds it."""
    if group_rank is not None or type(rank) is not int:
        return None
    if group is distributed_c10d._world.default_pg:
        index: object = rank  # torch's get_group_rank: the default group's ranks are the global ones
    else:
        index = distributed_c10d._world.pg_group_ranks.get(group, {}).get(rank)
    members = group.group.ranks  # type: ignore[attr-defined]
    if type(index) is not int or not 0 <= index < len(members):
        return None  # not a member, or out of range: torch's path says what is wrong
    return index, members[index]


def _issue(group: ControlledProcessGroup, call: ops.CollectiveCall, async_op: bool) -> object:
    state = group.state  # type: ignore[attr-defined]
    work = state.world.collectives.issue(state, group.group, call, async_op)  # type: ignore[attr-defined]
    # A synchronous collective under gloo is complete when issued: torch's wait() would return at once.
    return work if async_op else None


def direct_all_reduce(tensor: object, op: object, group: object, async_op: object) -> object:
    """What ``all_reduce(tensor, op=op, group=group, async_op=async_op)`` returns, or ``NotImplemented``."""
    if not _plain(tensor) or type(op) is not _RED_OP:
        return NotImplemented  # torch would check the reduction
    pg = _group(group, async_op)
    if pg is None:
        return NotImplemented
    return _issue(pg, ops.AllReduce([tensor], op), async_op)  # type: ignore[list-item, arg-type]


def direct_broadcast(tensor: object, src: object, group: object, async_op: object, group_src: object) -> object:
    if not _plain(tensor) or _fp8(tensor):
        return NotImplemented  # torch views an fp8 tensor as bytes on older GPUs
    pg = _group(group, async_op)
    root = None if pg is None else _root(pg, src, group_src)
    if root is None:
        return NotImplemented
    return _issue(pg, ops.Broadcast([tensor], *root), async_op)  # type: ignore[arg-type, list-item]


def direct_reduce(
    tensor: object, dst: object, op: object, group: object, async_op: object, group_dst: object
) -> object:
    if not _plain(tensor) or type(op) is not _RED_OP:
        return NotImplemented
    pg = _group(group, async_op)
    root = None if pg is None else _root(pg, dst, group_dst)
    if root is None:
        return NotImplemented
    is_root = pg.group.index_of(pg.state.rank) == root[0]  # type: ignore[union-attr]
    return _issue(pg, ops.Reduce(tensor, root[0], root[1], op, is_root), async_op)  # type: ignore[arg-type]


def direct_all_gather(tensor_list: object, tensor: object, group: object, async_op: object) -> object:
    if not _plain(tensor) or type(tensor_list) is not list:
        return NotImplemented
    dtype = tensor.dtype  # type: ignore[attr-defined]
    if not all(_plain(t) and t.dtype == dtype for t in tensor_list):
        return NotImplemented  # torch checks the list and its dtypes
    pg = _group(group, async_op)
    if pg is None:
        return NotImplemented
    return _issue(pg, ops.AllGather(list(tensor_list), tensor), async_op)  # type: ignore[arg-type]


def direct_reduce_scatter_single(output: object, input: object, op: object, group: object, async_op: object) -> object:
    if not (_plain(output) and _plain(input)) or type(op) is not _RED_OP:
        return NotImplemented
    pg = _group(group, async_op)
    if pg is None or input.numel() != output.numel() * pg.group.size():  # type: ignore[attr-defined]
        return NotImplemented  # the backend's size check raises on torch's path
    return _issue(pg, ops.ReduceScatterTensor(output, input, op), async_op)  # type: ignore[arg-type]


def _table() -> dict[Callable, Callable]:
    """torch's API function (as its module names it, decorated) -> the direct call taking torch's arguments.

    torch's function calls handle_torch_function with every one of its own
    parameters by name after the relevant positional ones: a direct call
    whose parameters are named otherwise (another torch version) is left out.
    """
    pairs = [
        ("all_reduce", direct_all_reduce),
        ("broadcast", direct_broadcast),
        ("reduce", direct_reduce),
        ("all_gather", direct_all_gather),
        ("reduce_scatter_single", direct_reduce_scatter_single),
    ]
    table = {}
    for name, direct in pairs:
        public = getattr(distributed_c10d, name, None)
        if public is None:
            continue
        if list(inspect.signature(public).parameters) == list(inspect.signature(direct).parameters):
            table[public] = direct
    return table


DIRECT = _table()
