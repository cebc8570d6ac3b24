"""The controlled process group: a real ``torch.distributed`` backend.

:class:`ControlledProcessGroup` subclasses torch's C++ ``ProcessGroup``, so
everything that talks to a process group reaches it: torch's Python API,
DDP's C++ reducer (its bucketed all-reduces, ``_verify_params_across_processes``,
``_broadcast_coalesced``), FSDP2's all-gathers and reduce-scatters, DeviceMesh,
DTensor and functional collectives. Each method turns torch's arguments (group
ranks, option structs) into one :class:`~.ops.CollectiveCall` or message and
hands it to the controlled scheduler (:mod:`.collectives`, :mod:`.p2p`), so
every operation is a scheduling point checked for mismatches.

An operation is synchronous (it returns complete) when torch's Python API
called it with ``async_op=False`` or as a blocking ``send``/``recv``, which
then waits at once; in every other case (``async_op=True``, ``isend``,
``irecv``, calls from C++) it returns at once and its transfer runs as
separate steps until ``Work.wait()``.
"""

from __future__ import annotations

import os
import sys
from datetime import timedelta
from types import FrameType

import torch
import torch.distributed as dist
from torch.distributed import c10d_logger, distributed_c10d

from dnsse.frameworks.torch_dist import ops
from dnsse.frameworks.torch_dist.groups import Group
from dnsse.frameworks.torch_dist.mode_off import apart
from dnsse.frameworks.torch_dist.streams import uses_nccl
from dnsse.frameworks.torch_dist.work import Work
from dnsse.frameworks.torch_dist.world import RankState

_C10D_FILE = distributed_c10d.__file__
# torch wraps its API in a logging decorator: its frames sit between send and isend.
_LOGGER_FILE = c10d_logger.__file__
# The helpers of this package that may stand between torch's API and a backend method.
_OURS = os.path.dirname(__file__) + os.sep
_BLOCKING_P2P = frozenset({"send", "recv"})
_ASYNC_P2P = frozenset({"isend", "irecv"})


def _caller_waits() -> bool:
    """Did torch's Python API call this backend method asking for a blocking operation?

    Such a caller waits on the Work at once, so the operation can block where
    it is issued; that keeps the report's "waits for all_reduce #3" precise.
    The caller is the first frame up the stack that is neither dnsse's (this
    package's helpers, however many) nor torch's logging decorator; called
    from C++ (DDP's reducer, functional collectives), it is not torch's API.
    """
    frame = _torch_frame(sys._getframe(1))
    if frame is None or frame.f_code.co_filename != _C10D_FILE:
        return False
    name = frame.f_code.co_name
    if name in _ASYNC_P2P:
        # torch's send and recv are isend and irecv followed by wait().
        outer = _torch_frame(frame.f_back)
        return outer is not None and outer.f_code.co_filename == _C10D_FILE and outer.f_code.co_name in _BLOCKING_P2P
    return frame.f_locals.get("async_op") is False


def _torch_frame(frame: FrameType | None) -> FrameType | None:
    """``frame`` or the first frame above it that is neither this package's nor torch's logging decorator's."""
    while frame is not None:
        filename = frame.f_code.co_filename
        if filename != _LOGGER_FILE and not filename.startswith(_OURS):
            return frame
        frame = frame.f_back
    return None


def device_types(backend: str) -> list[torch.device]:
    """The devices torch gives a group of ``backend`` ("gloo", "nccl", "cpu:gloo,cuda:nccl"...)."""
    try:
        devices = distributed_c10d.BackendConfig(dist.Backend(backend)).get_device_backend_map()
    except ValueError:
        return [torch.device("cpu")]
    return [torch.device(device) for device in devices]


def _reduce_op(opts: object) -> object:
    return getattr(opts, "reduceOp", dist.ReduceOp.SUM) if opts is not None else dist.ReduceOp.SUM


class ControlledProcessGroup(dist.ProcessGroup):
    """One rank's object for one group; every operation goes to the scheduler."""

    def __init__(self, state: RankState, group: Group) -> None:
        index = group.index_of(state.rank)
        assert index is not None
        super().__init__(index, group.size())
        self.state = state
        self.group = group
        self._torch_name = ""
        self._torch_desc = "undefined"
        # destroy_process_group shut it down: a later execution must not start from it (see DefaultGroups).
        self.destroyed = False

    # ------------------------------------------------------------ identity
    def getBackendName(self) -> str:  # noqa: N802 - torch's C++ name
        return "dnsse"

    # torch keeps a group's name and description in its backends, which a
    # Python group has none of: DeviceMesh and functional collectives find
    # groups by these names, from Python and from C++.
    def setGroupName(self, name: str) -> None:  # noqa: N802
        self._torch_name = name

    def getGroupName(self) -> str:  # noqa: N802
        return self._torch_name

    def setGroupDesc(self, desc: str) -> None:  # noqa: N802
        self._torch_desc = desc

    def getGroupDesc(self) -> str:  # noqa: N802
        return self._torch_desc

    @property
    def _device_types(self) -> list[torch.device]:
        """The devices the backend the program named serves, as torch's gloo and NCCL groups list them.

        A group made in Python registers no C++ backend, so torch's property
        would list none; ``dcp.async_save`` refuses a group without the CPU, and
        object collectives pick their device from this list.
        """
        return device_types(self.group.backend or self.state.backend)

    _set_group_name = setGroupName
    _set_group_desc = setGroupDesc
    group_name = property(getGroupName)
    group_desc = property(getGroupDesc)

    def __repr__(self) -> str:
        return f"<dnsse ProcessGroup {self.group} on rank {self.state.rank}>"

    # --------------------------------------------------------- collectives
    def _issue(self, call: ops.CollectiveCall) -> Work:
        asynchronous = not _caller_waits()
        return apart(self.state.world.collectives.issue, self.state, self.group, call, asynchronous)

    def _root(self, opts: object) -> tuple[int, int]:
        root = int(getattr(opts, "rootRank", 0))
        return root, self.group.ranks[root]

    def allreduce(self, tensors: list[torch.Tensor], opts: object = None) -> Work:
        return self._issue(ops.AllReduce(list(tensors), _reduce_op(opts)))

    def allreduce_coalesced(self, tensors: list[torch.Tensor], opts: object = None) -> Work:
        call = ops.AllReduce(list(tensors), _reduce_op(opts))
        return self._issue(ops.Coalesced("all_reduce_coalesced", [call]))

    def broadcast(self, tensors: list[torch.Tensor], opts: object = None) -> Work:
        root, src = self._root(opts)
        return self._issue(ops.Broadcast(list(tensors), root, src))

    def reduce(self, tensors: list[torch.Tensor], opts: object = None) -> Work:
        root, dst = self._root(opts)
        index = self.group.index_of(self.state.rank)
        return self._issue(ops.Reduce(tensors[0], root, dst, _reduce_op(opts), index == root))

    def allgather(self, output_lists: list[list[torch.Tensor]], inputs: list[torch.Tensor], opts: object = None) -> Work:
        return self._issue(ops.AllGather(list(output_lists[0]), inputs[0]))

    def allgather_coalesced(
        self, output_lists: list[list[torch.Tensor]], inputs: list[torch.Tensor], opts: object = None
    ) -> Work:
        calls: list[ops.CollectiveCall] = [ops.AllGather(list(o), i) for o, i in zip(output_lists, inputs)]
        return self._issue(ops.Coalesced("all_gather_coalesced", calls))

    def all_gather_single(self, output: torch.Tensor, input: torch.Tensor, opts: object = None) -> Work:
        return self._issue(self._gather_into(output, input))

    _allgather_base = all_gather_single

    def _gather_into(self, output: torch.Tensor, input: torch.Tensor) -> ops.CollectiveCall:
        if output.numel() != input.numel() * self.group.size():
            raise ValueError(
                f"all_gather_into_tensor: output_tensor has {output.numel()} elements, expected "
                f"{self.group.size()} x {input.numel()} (group size x input size)"
            )
        return ops.AllGatherIntoTensor(output, input)

    def allgather_into_tensor_coalesced(
        self, outputs: list[torch.Tensor], inputs: list[torch.Tensor], opts: object = None
    ) -> Work:
        calls = [self._gather_into(o, i) for o, i in zip(outputs, inputs)]
        return self._issue(ops.Coalesced("all_gather_into_tensor_coalesced", calls))

    all_gather_single_coalesced = allgather_into_tensor_coalesced

    def gather(self, output_lists: list[list[torch.Tensor]], inputs: list[torch.Tensor], opts: object = None) -> Work:
        root, dst = self._root(opts)
        outputs = list(output_lists[0]) if output_lists else []
        return self._issue(ops.Gather(inputs[0], outputs, root, dst))

    def scatter(self, outputs: list[torch.Tensor], input_lists: list[list[torch.Tensor]], opts: object = None) -> Work:
        root, src = self._root(opts)
        inputs = list(input_lists[0]) if input_lists else []
        return self._issue(ops.Scatter(outputs[0], inputs, root, src))

    def reduce_scatter(
        self, outputs: list[torch.Tensor], input_lists: list[list[torch.Tensor]], opts: object = None
    ) -> Work:
        return self._issue(ops.ReduceScatter(outputs[0], list(input_lists[0]), _reduce_op(opts)))

    def reduce_scatter_single(self, output: torch.Tensor, input: torch.Tensor, opts: object = None) -> Work:
        return self._issue(self._scatter_from(output, input, opts))

    _reduce_scatter_base = reduce_scatter_single

    def _scatter_from(self, output: torch.Tensor, input: torch.Tensor, opts: object) -> ops.CollectiveCall:
        if input.numel() != output.numel() * self.group.size():
            raise ValueError(
                f"reduce_scatter_tensor: input has {input.numel()} elements, expected "
                f"{self.group.size()} x {output.numel()} (group size x output size)"
            )
        return ops.ReduceScatterTensor(output, input, _reduce_op(opts))

    def reduce_scatter_tensor_coalesced(
        self, outputs: list[torch.Tensor], inputs: list[torch.Tensor], opts: object = None
    ) -> Work:
        calls = [self._scatter_from(o, i, opts) for o, i in zip(outputs, inputs)]
        return self._issue(ops.Coalesced("reduce_scatter_tensor_coalesced", calls))

    reduce_scatter_single_coalesced = reduce_scatter_tensor_coalesced

    def alltoall(self, outputs: list[torch.Tensor], inputs: list[torch.Tensor], opts: object = None) -> Work:
        return self._issue(ops.AllToAll(list(outputs), list(inputs)))

    def all_to_all_single(
        self,
        output: torch.Tensor,
        input: torch.Tensor,
        output_split_sizes: list[int] | None = None,
        input_split_sizes: list[int] | None = None,
        opts: object = None,
    ) -> Work:
        return self._issue(ops.AllToAllSingle(output, input, output_split_sizes, input_split_sizes))

    alltoall_base = all_to_all_single

    def barrier(self, opts: object = None) -> Work:
        return self._issue(ops.Barrier())

    def monitored_barrier(self, timeout: timedelta | None = None, wait_all_ranks: bool = False) -> None:
        collectives = self.state.world.collectives
        apart(collectives.monitored_barrier, self.state, self.group, timeout, wait_all_ranks)

    # ------------------------------------------------------ point-to-point
    def send(self, tensors: list[torch.Tensor], dst: int, tag: int = 0) -> Work:
        blocking = _caller_waits()
        state = self.state
        message = apart(
            state.world.mailboxes.send,
            state, self.group, self.group.ranks[dst], _matched_by(state, self.group, tag), tensors[0],
            "send" if blocking else "isend", not blocking,
        )
        return apart(Work, state, message, blocking and not uses_nccl(state, self.group))

    def recv(self, tensors: list[torch.Tensor], src: int, tag: int = 0) -> Work:
        return self._receive(tensors[0], self.group.ranks[src], tag, _caller_waits())

    def recv_anysource(self, tensors: list[torch.Tensor], tag: int = 0) -> Work:
        return self._receive(tensors[0], None, tag, _caller_waits())

    def _receive(self, buffer: torch.Tensor, src: int | None, tag: int, blocking: bool) -> Work:
        state = self.state
        receive = apart(
            state.world.mailboxes.receive, state, self.group, src, _matched_by(state, self.group, tag), buffer,
            "recv" if blocking else "irecv", not blocking,
        )
        return apart(Work, state, receive, blocking and not uses_nccl(state, self.group))


def _matched_by(state: RankState, group: Group, tag: int) -> int:
    """The tag messages are matched by: the program's under gloo; none under NCCL.

    ProcessGroupNCCL ignores tags: a pair's sends and receives match in the
    order they were issued, so receives posted in another order of the tags
    take each other's messages (wrong values, no hang).
    """
    return 0 if uses_nccl(state, group) else tag
