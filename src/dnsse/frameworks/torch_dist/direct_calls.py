"""``dist.all_reduce`` straight to the scheduler, for the call torch's API would only pass along.

A rank's ``dist.all_reduce(tensor)`` reaches :func:`.rank_mode.handle_c10d`
(torch function dispatch), which calls torch's ``all_reduce`` again with the
rank's mode off; that checks the tensor, builds an ``AllreduceOptions``,
finds the default group and calls the group's ``allreduce`` through
pybind11, which calls :class:`~.backend.ControlledProcessGroup` back in
Python, which reads the options and the caller's frames to learn what the
call already said, then issues the collective. For the plain case (a dense
tensor of no subclass, no other torch function mode, a reduction of
``ReduceOp``, the default group or one of dnsse's, no coalescing, gloo's
semantics) :func:`direct_all_reduce` issues the same collective with
the same arguments and returns what torch's ``all_reduce`` returns: about a
quarter of a synchronous all-reduce's CPU. Any other case returns
:data:`NotImplemented`, and torch's own path runs.
"""

from __future__ import annotations

import torch
import torch.distributed
from torch.distributed import distributed_c10d

from dnsse.frameworks.torch_dist import ops
from dnsse.frameworks.torch_dist.backend import ControlledProcessGroup
from dnsse.frameworks.torch_dist.mode_off import apart
from dnsse.frameworks.torch_dist.streams import uses_nccl

_Tensor = torch.Tensor
_STRIDED = torch.strided
_RED_OP = torch.distributed.ReduceOp.RedOpType
_modes = torch._C._len_torch_function_stack


def direct_all_reduce(tensor: object, op: object, group: object, async_op: bool) -> object:
    """What ``all_reduce(tensor, op=op, group=group, async_op=async_op)`` returns, or ``NotImplemented``."""
    if type(tensor) is not _Tensor:
        return NotImplemented
    if tensor.layout is not _STRIDED or tensor.is_complex():  # type: ignore[attr-defined]
        return NotImplemented
    if type(op) is not _RED_OP or _modes() != 1:
        return NotImplemented  # torch would check the reduction, or another mode would see the call
    if group is None:
        group = distributed_c10d._world.default_pg  # None before init_process_group: torch's path raises
    if type(group) is not ControlledProcessGroup:
        return NotImplemented  # no default group, a group this rank is not a member of, or a wrapped one
    state, members = group.state, group.group  # type: ignore[attr-defined]
    if uses_nccl(state, members) or group in distributed_c10d._world.pg_coalesce_state:
        # NCCL: the Work's wait() must come from torch's API (see streams.waits_on_stream).
        return NotImplemented
    call = ops.AllReduce([tensor], op)
    work = apart(state.world.collectives.issue, state, members, call, async_op)
    # A synchronous all-reduce under gloo is complete when issued: torch's wait() would return at once.
    return work if async_op else None


# torch's API function (as its module names it, decorated) -> the direct call taking its keyword arguments.
DIRECT = {distributed_c10d.all_reduce: direct_all_reduce}
