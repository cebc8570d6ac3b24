"""``torch.cuda.Stream``, ``Event`` and the current stream, on a rank's virtual device.

Each stream the program creates is a timeline of :mod:`.happens_before`;
the kernels the program issues while it is the thread's current stream are
logged on it (:mod:`.access_mode`), and its orderings are the ones CUDA
gives: ``wait_stream``, ``wait_event``/``Event.wait`` order streams,
``synchronize`` orders the host. Streams are created non-blocking, as
torch's are: a new stream is not ordered after the default stream until it
waits for it. Any ``priority`` is accepted; it orders nothing.

Kernels run on the host when issued, but a stream's work *completes* at a
step of its own that the scheduler places: ``Event.query()`` and
``Stream.query()`` are scheduling points that answer whether that step ran,
and ``synchronize()`` blocks the host at a scheduling point until it did.
The default stream completes in the host's order.

Outside a controlled rank every name here is torch's own.
"""

from __future__ import annotations

import time
from typing import Any

import torch

from dnsse.engine.agent import FINISHED, StepAgent, Wait
from dnsse.engine.execution import current_agent
from dnsse.engine.operation import Access, Operation
from dnsse.engine.uncontrolled import refuse
from dnsse.frameworks.torch_dist.access_mode import DeviceAccessMode, kernel_site
from dnsse.frameworks.torch_dist.happens_before import Timeline
from dnsse.frameworks.torch_dist.virtual_device import RankDevice, device_of
from dnsse.frameworks.torch_dist.world import rank_here

_IPC = "inter-process events join processes that dnsse does not run; the ranks here are threads of one process"

TORCH_STREAM = torch.cuda.Stream
TORCH_EVENT = torch.cuda.Event
TORCH_STREAM_CONTEXT = torch.cuda.StreamContext


class VirtualStream:
    """A CUDA stream of the calling rank's virtual device."""

    def __new__(cls, device: object = None, priority: int = 0, **kwargs: Any) -> Any:
        state = rank_here()
        if state is None:
            return TORCH_STREAM(device, priority, **kwargs)
        stream = object.__new__(cls)
        rank_device = device_of(state)
        site = kernel_site(state.world.execution.source_files) or "an unknown place"
        number, timeline = rank_device.new_stream(site)
        stream._bind(rank_device, timeline, priority, number)
        _watch(rank_device)
        return stream

    def _bind(self, device: RankDevice, timeline: Timeline, priority: int, number: int) -> None:
        self._device = device
        self._number = number
        self._timeline = timeline
        self.priority = priority
        self.completed = 0
        self._agent: StepAgent | None = None
        # The streams current before each `with stream:` still open.
        self._saved: list[Timeline] = []
        device.handles[timeline.key] = self

    @property
    def timeline(self) -> Timeline:
        return self._timeline

    @property
    def device(self) -> torch.device:
        return torch.device("cuda", self._device.index)

    @property
    def device_index(self) -> int:
        return self._device.index

    device_type = 1  # torch's DeviceType for CUDA

    @property
    def cuda_stream(self) -> int:
        """0 for the default stream, then 1, 2, ... in the order the rank created its streams."""
        return self._number

    stream_id = cuda_stream

    def wait_stream(self, stream: VirtualStream) -> None:
        """Later work on this stream starts after all work issued on ``stream`` so far."""
        self._timeline.join(stream.timeline.clock)

    def wait_event(self, event: VirtualEvent) -> None:
        event.wait(self)

    def record_event(self, event: VirtualEvent | None = None) -> VirtualEvent:
        event = event if event is not None else VirtualEvent()
        event.record(self)
        return event

    def query(self) -> bool:
        """Whether all work issued on the stream completed; if so, the host knows it (later kernels start after it)."""
        clock = dict(self._timeline.clock)
        if self._done_at(self._timeline.tick):
            self._device.host_waits(clock)
            return True
        return False

    def synchronize(self) -> None:
        self._finish(self._timeline.tick, "Stream.synchronize()")
        self._device.host_waits(self._timeline.clock)

    def __enter__(self) -> VirtualStream:
        self._saved.append(self._device.current())
        self._device.set_current(self._timeline)
        return self

    def __exit__(self, *exc: object) -> None:
        self._device.set_current(self._saved.pop())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VirtualStream) and other._timeline is self._timeline

    def __hash__(self) -> int:
        return id(self._timeline)

    def __repr__(self) -> str:
        return f"<torch.cuda.Stream device=cuda:{self._device.index} cuda_stream={self.cuda_stream} (dnsse: {self._timeline.label})>"

    # ---------------------------------------------------------- completion
    def _object(self) -> str:
        return f"cuda:{self._timeline.key}"

    def _completing(self, tick: int) -> bool:
        """Is work up to ``tick`` complete? If not, make sure a step to complete it is pending."""
        if self._timeline is self._device.default or self.completed >= tick:
            return True
        if self._agent is None or self._agent.done:
            execution = self._device.state.world.execution
            self._agent = StepAgent(
                execution,
                f"rank {self._device.state.rank} {self._timeline.label}",
                self._complete,
                None,
                Operation("cuda.complete", ((self._object(), Access.WRITE),), f"{self._timeline.label} runs its work"),
            )
        return False

    def _complete(self) -> object:
        self.completed = self._timeline.tick
        return FINISHED

    def _done_at(self, tick: int) -> bool:
        """A scheduling point, then whether work up to ``tick`` completed."""
        if not self._completing(tick):
            state = self._device.state
            state.world.execution.yield_point(
                state.agent, Operation("cuda.query", ((self._object(), Access.READ),), f"query {self._timeline.label}")
            )
        return self.completed >= tick or self._timeline is self._device.default

    def _finish(self, tick: int, what: str) -> None:
        """Block the host until work up to ``tick`` completed."""
        if self._completing(tick):
            return
        state = self._device.state
        state.world.execution.block(
            state.agent,
            Wait(lambda: self.completed >= tick, lambda: f"{self._timeline.label} to finish its work"),
            Operation("cuda.synchronize", ((self._object(), Access.READ),), f"{what} on rank {state.rank}"),
        )

    def finish_all(self) -> None:
        self._finish(self._timeline.tick, "torch.cuda.synchronize()")


def _handle(device: RankDevice, timeline: Timeline) -> VirtualStream:
    found = device.handles.get(timeline.key)
    if found is None:
        found = object.__new__(VirtualStream)
        found._bind(device, timeline, 0, 0)
    return found  # type: ignore[return-value]


def _watch(device: RankDevice) -> None:
    """Log the rank's kernels from now on (on its own thread: its threads' kernels go unlogged)."""
    if device.mode is None and current_agent() is device.state.main_agent:
        mode = DeviceAccessMode(device)
        mode.__enter__()
        device.mode = mode


def close(device: RankDevice) -> None:
    """The rank ends (on its own thread): stop logging."""
    device.closed = True
    if device.mode is not None:
        device.mode.__exit__(None, None, None)  # type: ignore[attr-defined]
        device.mode = None


class VirtualEvent:
    """A CUDA event: a point in one stream's work."""

    def __new__(cls, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False, **kw: Any) -> Any:
        if rank_here() is None:
            return TORCH_EVENT(enable_timing=enable_timing, blocking=blocking, interprocess=interprocess, **kw)
        if interprocess:
            refuse("torch.cuda.Event(interprocess=True)", _IPC)
        event = object.__new__(cls)
        event.enable_timing = enable_timing
        event._stream = None
        event._tick = 0
        event._clock = None
        event._time = 0.0
        return event

    def record(self, stream: VirtualStream | None = None) -> None:
        stream = stream if stream is not None else current_stream()
        self._stream = stream
        self._tick = stream.timeline.tick
        self._clock = dict(stream.timeline.clock)
        self._time = time.monotonic()

    def wait(self, stream: VirtualStream | None = None) -> None:
        """Later work on ``stream`` starts after the recorded work; an event never recorded orders nothing, as in CUDA."""
        stream = stream if stream is not None else current_stream()
        if self._clock is not None:
            stream.timeline.join(self._clock)

    def query(self) -> bool:
        """Whether the recorded work completed; if so, the host knows it (later kernels start after it)."""
        if self._stream is None:
            return True
        if self._stream._done_at(self._tick):
            self._stream._device.host_waits(self._clock)
            return True
        return False

    def synchronize(self) -> None:
        if self._stream is None:
            return
        self._stream._finish(self._tick, "Event.synchronize()")
        self._stream._device.host_waits(self._clock)

    def elapsed_time(self, end_event: VirtualEvent) -> float:
        """Milliseconds of the execution's clock between the two records."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._stream is None or end_event._stream is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        if not (self.query() and end_event.query()):
            raise RuntimeError("CUDA error: device not ready (both events must be completed before elapsed_time)")
        return (end_event._time - self._time) * 1000.0

    def __repr__(self) -> str:
        return f"<torch.cuda.Event (dnsse){' recorded' if self._stream is not None else ''}>"


def current_stream(device: object = None) -> Any:
    state = rank_here()
    if state is None:
        return _TORCH_CURRENT(device)
    rank_device = device_of(state)
    return _handle(rank_device, rank_device.current())


def default_stream(device: object = None) -> Any:
    state = rank_here()
    if state is None:
        return _TORCH_DEFAULT(device)
    rank_device = device_of(state)
    return _handle(rank_device, rank_device.default)


def set_stream(stream: Any) -> None:
    state = rank_here()
    if state is None:
        _TORCH_SET(stream)
        return
    if stream is not None:
        device_of(state).set_current(stream.timeline)


class StreamContext:
    """``with torch.cuda.stream(s):``: ``s`` is the thread's current stream inside."""

    def __new__(cls, stream: Any) -> Any:
        if rank_here() is None:
            return TORCH_STREAM_CONTEXT(stream)
        context = object.__new__(cls)
        context.stream = stream
        return context

    def __enter__(self) -> None:
        if self.stream is not None:
            self._saved = self.stream._device.current()
            self.stream._device.set_current(self.stream.timeline)

    def __exit__(self, *exc: object) -> None:
        if self.stream is not None:
            self.stream._device.set_current(self._saved)


def stream(stream: Any) -> StreamContext:
    return StreamContext(stream)


def every_stream(device: RankDevice) -> list[VirtualStream]:
    return [handle for handle in device.handles.values() if isinstance(handle, VirtualStream)]


_TORCH_CURRENT = torch.cuda.current_stream
_TORCH_DEFAULT = torch.cuda.default_stream
_TORCH_SET = torch.cuda.set_stream
