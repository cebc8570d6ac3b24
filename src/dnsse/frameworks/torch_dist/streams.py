"""NCCL's execution model on the host: each rank's operations run in stream order.

With ``init_process_group("nccl")`` (or ``init_device_mesh("cuda")``) a
collective, ``send`` or ``recv`` returns to the host once it is enqueued on a
CUDA stream; the GPU runs it later, in that stream's order. ProcessGroupNCCL
gives each communicator its own stream: one per group for collectives, one
per pair of ranks for an unbatched send or recv. A kernel of a collective
occupies its stream until every member's kernel runs, and so does an
unbatched ``ncclSend``/``ncclRecv`` until the peer's matching kernel runs
("This operation is blocking for the GPU. If multiple ncclSend() and
ncclRecv() operations need to progress concurrently to complete, they must
be fused within a ncclGroupStart()/ncclGroupEnd() section", NCCL's API
reference); the operations of one ``batch_isend_irecv`` are such a group.

``Work.wait()`` without a timeout (the program's own, or the one torch's API
makes for a blocking operation) and ``Work.synchronize()`` only make the
rank's compute stream wait: later kernels, and later NCCL operations
(which wait for the compute stream when enqueued), run after it, while the
host goes on; ``wait(timeout=...)`` waits on the host, as torch documents. Here kernels run on the host at once, so a torch call that
touches a buffer of such an operation waits for it first (see
:mod:`.rank_mode`); ``barrier()``, ``torch.cuda.synchronize()`` and the
end of the rank's process wait on the host, as they do on a GPU. An
ordering that leaves a stream waiting forever is a deadlock, which
:mod:`.stream_hangs` labels as the device hang it would be.

This module is the bottom layer: it knows operations only as
:class:`Enqueued` and ranks only through what the functions are given.
"""

from __future__ import annotations

import os
import sys
from collections import deque
from dataclasses import dataclass, field
from types import FrameType
from typing import TYPE_CHECKING, Protocol

import torch.overrides
from torch.distributed import c10d_logger, distributed_c10d

from dnsse.engine.agent import Wait
from dnsse.engine.operation import Access, Operation

if TYPE_CHECKING:
    from dnsse.frameworks.torch_dist.groups import Group
    from dnsse.frameworks.torch_dist.world import RankState

_C10D_FILE = distributed_c10d.__file__
# Between the program and the API's wait: torch's logging decorator, and the
# torch function dispatch that takes the call through each rank's mode (with
# however many frames of this package's helpers, see :func:`_api_frame`).
_API_FRAMES = frozenset({_C10D_FILE, c10d_logger.__file__, torch.overrides.__file__})
_OURS = os.path.dirname(__file__) + os.sep
# A barrier's wait blocks the host under NCCL too: ProcessGroupNCCL synchronizes the stream for it.
_HOST_WAITS = frozenset({"barrier", "monitored_barrier"})


class Enqueued(Protocol):
    """One rank's side of an operation on a stream (a collective part, a message, a receive)."""

    op: str
    site: str
    done: bool
    entry: Entry | None
    touches: tuple[tuple[str, Access], ...]

    def buffers(self) -> list[torch.Tensor]:
        """Every tensor the kernel reads or writes."""
        ...

    def describe_wait(self) -> str: ...


@dataclass(eq=False)
class Entry:
    """One kernel on a stream, or one batch of send/recv kernels that progress together."""

    stream: Stream
    ops: list[Enqueued]
    # Operations the compute stream waited for when this was enqueued: it starts after them.
    after: tuple[Enqueued, ...]

    def finished(self) -> bool:
        return all(op.done for op in self.ops)

    def running(self) -> bool:
        return self.stream.head() is self and all(op.done for op in self.after)


@dataclass(eq=False)
class Stream:
    """One communicator's stream on one rank: entries run one at a time, in order."""

    rank: int
    key: str
    label: str
    entries: deque[Entry] = field(default_factory=deque)

    @property
    def object_name(self) -> str:
        """What the steps of this stream's operations touch, so that the search sees their order."""
        return f"stream:{self.rank}:{self.key}"

    def head(self) -> Entry | None:
        while self.entries and self.entries[0].finished():
            self.entries.popleft()
        return self.entries[0] if self.entries else None


@dataclass(eq=False)
class Streams:
    """One rank's NCCL streams and what its compute stream waits for."""

    by_key: dict[str, Stream] = field(default_factory=dict)
    # Operations the compute stream waits for, not yet known to be finished.
    fence: list[Enqueued] = field(default_factory=list)
    # The batch_isend_irecv call being enqueued now, and its entry.
    batch: tuple[FrameType, Entry] | None = None

    def enqueue(self, rank: int, key: str, label: str, op: Enqueued, batch: FrameType | None = None) -> None:
        """Put ``op`` at the end of its stream (or into the batch being enqueued)."""
        if batch is not None and self.batch is not None and self.batch[0] is batch:
            entry = self.batch[1]
            entry.ops.append(op)
            op.entry = entry
            return
        stream = self.by_key.get(key)
        if stream is None:
            stream = self.by_key[key] = Stream(rank, key, label)
        self.fence = [waited for waited in self.fence if not waited.done]
        entry = Entry(stream, [op], tuple(self.fence))
        stream.entries.append(entry)
        op.entry = entry
        self.batch = (batch, entry) if batch is not None else None

    def pending(self) -> list[Enqueued]:
        """Every enqueued operation not finished, in stream order."""
        found = []
        for stream in self.by_key.values():
            stream.head()
            found.extend(op for entry in stream.entries for op in entry.ops if not op.done)
        return found


# The key prefix of the stream of a pair of ranks' unbatched sends and receives.
P2P_STREAM = "p2p:"


def collective_stream(group: Group) -> tuple[str, str]:
    """Key and label of a group's stream: its collectives, and its batched sends and receives.

    ProcessGroupNCCL runs the point-to-point operations of a coalesced group
    (``batch_isend_irecv``) on the collective communicator, so they queue
    in order with the group's collectives.
    """
    return f"coll:{group.name}", f"collectives and batched send/recv of {group}"


def uses_nccl(state: RankState, group: Group) -> bool:
    """Do ``group``'s operations on this rank have NCCL's semantics (its own backend, or else the default group's)?"""
    return "nccl" in (group.backend or state.backend)


def running(op: Enqueued) -> bool:
    """May the operation's kernel run now? Always, for an operation on no stream (gloo)."""
    return op.entry is None or op.entry.running()


def stream_objects(op: Enqueued) -> tuple[tuple[str, Access], ...]:
    return ((op.entry.stream.object_name, Access.WRITE),) if op.entry is not None else ()


def batch_frame() -> FrameType | None:
    """The frame of the ``batch_isend_irecv`` call issuing this operation, if any."""
    frame: FrameType | None = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "batch_isend_irecv" and code.co_filename == _C10D_FILE:
            return frame
        frame = frame.f_back
    return None


def waits_on_stream(state: RankState, op: Enqueued, caller: FrameType) -> bool:
    """Is this ``Work.wait()`` (or ``synchronize()``) one that, under NCCL, only makes the compute stream wait?

    torch documents that ``wait()`` without a timeout lets "the current
    stream block on the completion of the NCCL work" and nothing more. That
    is modelled for the program's own call, and for torch's API waiting for
    a blocking operation the program called: the program's later reads of
    the buffers are torch calls, which the rank's mode makes wait for the
    operation as the kernels would. Every other caller (DDP, FSDP, DTensor,
    functional collectives, whose later reads of the buffers a torch
    function mode cannot see) is made to wait on the host, which can only
    hide orderings, never invent one.
    """
    if op.entry is None or op.op in _HOST_WAITS:
        return False
    source_files = state.world.execution.source_files
    if caller.f_code.co_filename in source_files:
        return True
    if caller.f_code.co_filename != _C10D_FILE:
        return False
    outer = caller.f_back
    while outer is not None and _api_frame(outer.f_code.co_filename):
        outer = outer.f_back
    return outer is not None and outer.f_code.co_filename in source_files


def _api_frame(filename: str) -> bool:
    return filename in _API_FRAMES or filename.startswith(_OURS)


def wait_for(state: RankState, ops: list[Enqueued], why: str) -> None:
    """Block the rank's host until ``ops`` finished on their streams."""
    pending = [op for op in ops if not op.done]
    if not pending:
        return
    touches: dict[str, Access] = {}
    for op in pending:
        touches.update(op.touches)
        touches.update(stream_objects(op))

    def describe() -> str:
        left = [op for op in pending if not op.done]
        return f"{why}: " + "; ".join(op.describe_wait().removeprefix("Work.wait() of ") for op in left[:3])

    state.world.execution.block(
        state.agent,
        Wait(lambda: all(op.done for op in pending), describe),
        Operation("stream.sync", tuple(touches.items()), why),
    )
