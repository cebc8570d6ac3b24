"""One rank's virtual CUDA device: its streams' orderings, and the races they leave.

On a machine without CUDA each rank sees one virtual device (see
:mod:`.cuda_streams` for the program's streams and events, and
:mod:`.cuda_queries` for what the device says about itself). Kernels run on
the host when issued, so values are the CPU's; what the device keeps is
*when each kernel may run* relative to the others, as
:mod:`.happens_before` clocks, and which buffers each touched. A kernel
whose access conflicts with one not ordered before it fails the execution
with a ``race`` naming both kernels, their streams and their lines.

Tracking starts when the rank creates its first stream: until then every
kernel runs on the default stream, in the host's order, and nothing can
race. Storages are logged by address and held by weak reference, so a
freed tensor's address reused by a new one starts afresh.
"""

from __future__ import annotations

import _thread
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

import torch
from torch.multiprocessing.reductions import StorageWeakRef

from dnsse.engine.bugs import Bug, BugKind
from dnsse.engine.execution import ExecutionAborted
from dnsse.frameworks.torch_dist.happens_before import Access, AccessLog, Race, Timeline

if TYPE_CHECKING:
    from dnsse.frameworks.torch_dist.world import RankState

# What a kernel that ran before tracking started is called in a report.
_BEFORE_STREAMS = "an earlier kernel"


@dataclass(eq=False)
class RankDevice:
    """The virtual device of one rank."""

    state: RankState
    default: Timeline
    # What the host knows finished: every kernel issued from now on starts after it.
    host: dict[str, int] = field(default_factory=dict)
    log: AccessLog = field(default_factory=AccessLog)
    weak: dict[int, StorageWeakRef] = field(default_factory=dict)
    nccl: dict[str, Timeline] = field(default_factory=dict)
    timelines: list[Timeline] = field(default_factory=list)
    # The device set_device chose (torch.cuda.current_device()).
    index: int = 0
    # The NVTX ranges open (torch.cuda.nvtx.range_push), which mark nothing here.
    nvtx: list[str] = field(default_factory=list)
    tracking: bool = False
    streams_made: int = 0
    closed: bool = False
    # Inside a copy from the host (see RankMode._upload): its kernels are not the program's to judge.
    uploading: int = 0
    # Storages known to be device memory: copied from the host, or written by a stream's kernel
    # (a host tensor never is). Copying one "to the device" again copies nothing.
    on_device: set[int] = field(default_factory=set)
    # The program's stream objects by timeline key, so that current_stream() == stream holds.
    handles: dict[str, object] = field(default_factory=dict)
    # The dispatch mode that logs the rank's kernels (see .access_mode), once tracking started.
    mode: object = None
    # Per OS thread: the timeline of the thread's current stream (torch keeps the current stream per thread).
    local: object = field(default_factory=_thread._local)

    def current(self) -> Timeline:
        return getattr(self.local, "timeline", self.default)

    def set_current(self, timeline: Timeline) -> None:
        self.local.timeline = timeline  # type: ignore[attr-defined]

    def new_stream(self, site: str) -> tuple[int, Timeline]:
        """A stream the program creates at ``site``: its number (1, 2, ... per rank) and timeline."""
        self.streams_made += 1
        number = self.streams_made
        timeline = Timeline(f"rank{self.state.rank}:{number}", f"stream {number} (created at {site})")
        self.timelines.append(timeline)
        if not self.tracking:
            self.tracking = True
            # Kernels issued before tracking count as one kernel of the default stream: a new
            # stream that reads their results must first wait for the default stream.
            self.default.advance()
        return number, timeline

    def kernel(
        self,
        timeline: Timeline,
        op: str,
        site: str,
        reads: Iterable[torch.Tensor],
        writes: Iterable[torch.Tensor],
        fresh: Iterable[torch.Tensor] = (),
    ) -> dict[str, int]:
        """Log one kernel issued on ``timeline``; fail the execution on a race. Returns the clock after it.

        ``fresh`` are the tensors the kernel returns: written, and new
        unless their address was logged before.
        """
        if timeline is not self.default:
            timeline.join(self.host)
        tick = timeline.advance()
        for tensors, write, new in ((reads, False, False), (writes, True, False), (fresh, True, True)):
            for tensor in tensors:
                race = self._access(timeline, tick, tensor, write, op, site, new)
                if race is not None:
                    self._fail(race)
        return dict(timeline.clock)

    def collective(
        self, op: str, site: str, stream: tuple[str, str] | None, reads: list[torch.Tensor], writes: list[torch.Tensor]
    ) -> dict[str, int] | None:
        """A collective's kernel: on its NCCL stream (``stream`` = key, label), which first waits for the current stream.

        Without a stream (gloo's semantics) the collective runs in the
        host's order on the current stream. Returns the clock after the
        kernel, which a ``Work.wait()`` later joins.
        """
        if not self.tracking:
            return None
        current = self.current()
        if stream is None:
            return self.kernel(current, op, site, reads, writes)
        key, label = stream
        timeline = self.nccl.get(key)
        if timeline is None:
            timeline = self.nccl[key] = Timeline(f"rank{self.state.rank}:{key}", f"the NCCL stream for {label}")
            self.timelines.append(timeline)
        timeline.join(current.clock)
        return self.kernel(timeline, op, site, reads, writes)

    def stream_waits(self, clock: dict[str, int] | None) -> None:
        """The current stream's later kernels start after everything ``clock`` covers."""
        if clock is not None and self.tracking:
            self.current().join(clock)

    def host_waits(self, clock: dict[str, int] | None) -> None:
        """The host saw everything ``clock`` covers finish: every later kernel starts after it."""
        if clock is not None and self.tracking:
            for key, tick in clock.items():
                if self.host.get(key, 0) < tick:
                    self.host[key] = tick
            self.default.join(clock)

    def synchronized(self) -> None:
        """``torch.cuda.synchronize()``: every kernel issued so far finished."""
        for timeline in self.timelines:
            self.host_waits(timeline.clock)
        self.log.clear()
        self.weak.clear()
        self.on_device.clear()

    def _access(
        self, timeline: Timeline, tick: int, tensor: torch.Tensor, write: bool, op: str, site: str, new: bool
    ) -> Race | None:
        if tensor.is_meta or tensor.numel() == 0:
            return None
        storage = tensor.untyped_storage()
        base = storage.data_ptr()
        if base == 0:
            return None
        weak = self.weak.get(base)
        if weak is not None and weak.expired():
            self.log.by_storage.pop(base, None)  # the address now belongs to a new tensor
            self.on_device.discard(base)
            weak = None
        if weak is None:
            self.weak[base] = StorageWeakRef(storage)
            if timeline is not self.default and not new:
                # Unseen since tracking started: last written by the default stream before it.
                before = Access(self.default.key, self.default.label, 1, True, base, base + storage.nbytes(),
                                _BEFORE_STREAMS, "a line before the first stream was created")
                self.log.record(base, self.default, before)
        start = tensor.data_ptr()
        if tensor.is_contiguous():
            end = start + tensor.nbytes
        else:
            extent = 1 + sum((size - 1) * abs(stride) for size, stride in zip(tensor.shape, tensor.stride()))
            end = start + extent * tensor.element_size()
        if write and timeline is not self.default:
            self.on_device.add(base)
        access = Access(timeline.key, timeline.label, tick, write, start, end, op, site)
        return self.log.record(base, timeline, access)

    def uploaded(self, tensor: torch.Tensor, site: str) -> None:
        """``tensor`` was just copied from the host on the current stream: a new device buffer."""
        if tensor.is_meta or tensor.numel() == 0:
            return
        storage = tensor.untyped_storage()
        base = storage.data_ptr()
        timeline = self.current()
        if timeline is not self.default:
            timeline.join(self.host)
        tick = timeline.advance()
        self.weak[base] = StorageWeakRef(storage)
        self.on_device.add(base)
        self.log.by_storage[base] = [
            Access(timeline.key, timeline.label, tick, True, base, base + storage.nbytes(), "copy to the device", site)
        ]

    def holds(self, tensor: torch.Tensor) -> bool:
        """Is ``tensor`` known to be device memory already?"""
        base = tensor.untyped_storage().data_ptr()
        weak = self.weak.get(base)
        return base in self.on_device and weak is not None and not weak.expired()

    def host_read(self, tensor: torch.Tensor, op: str, site: str) -> None:
        """The host reads ``tensor`` directly (``tolist()``, ``numpy()``): after the current stream's work, as torch syncs it."""
        if self.tracking:
            self.kernel(self.current(), f"{op} (a read on the host)", site, (tensor,), ())

    def _fail(self, race: Race) -> None:
        execution = self.state.world.execution
        execution.fail(race_bug(race, self.state.rank, self.state.agent.name))
        raise ExecutionAborted()


def race_bug(race: Race, rank: int, agent: str) -> Bug:
    earlier, later = race.earlier, race.later
    verb = "writes" if later.write else "reads"
    did = "wrote" if earlier.write else "read"
    return Bug(
        BugKind.RACE,
        f"on rank {rank}, {later.op} on {later.label} {verb} a buffer at {later.site} that {earlier.op} on "
        f"{earlier.label} {did} at {earlier.site}, with no ordering between them",
        details=[
            f"first: {earlier.describe()}",
            f"then: {later.describe()}",
            f"which of the two runs first on a GPU depends on timing; before the second, make the stream that "
            f"issues it wait for {earlier.label} (Stream.wait_stream, Stream.wait_event, Work.wait() under that "
            "stream, or Event.synchronize / torch.cuda.synchronize on the host)",
        ],
        agent=agent,
    )


def device_of(state: RankState) -> RankDevice:
    """The rank's virtual device, made on first use."""
    device = state.device
    if device is None:
        device = state.device = RankDevice(state, Timeline(f"rank{state.rank}:0", "the default stream"))
    return device
