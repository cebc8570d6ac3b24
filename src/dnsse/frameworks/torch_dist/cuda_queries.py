"""What the virtual CUDA device says about itself, and what it refuses.

Inside a controlled rank of a machine without CUDA, ``torch.cuda`` answers
as one virtual device per rank would (docs/virtual-cuda.md lists every
answer): it is available, there are as many devices as ranks, the device is
an 80 GiB compute-capability 9.0 part named :data:`DEVICE_NAME`, and it holds
nothing (tensors live in the host's memory: allocation counters stay at 0).
Streams and events are :mod:`.cuda_streams`'. NVTX ranges are accepted and
mark nothing.

What cannot run here is refused with exit 2, naming the call: CUDA graphs
(capture needs a GPU to record kernels), custom CUDA extensions built with
``torch.utils.cpp_extension`` and Triton kernels (their code runs only on a
GPU), external streams, and inter-process events.

Outside a controlled rank every name here is torch's own.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import torch

from dnsse.engine.uncontrolled import refuse
from dnsse.frameworks.torch_dist import cuda_streams
from dnsse.frameworks.torch_dist.virtual_device import device_of
from dnsse.frameworks.torch_dist.world import rank_here

DEVICE_NAME = "dnsse virtual CUDA device (runs on the CPU)"
TOTAL_MEMORY = 80 * 1024**3
CAPABILITY = (9, 0)


@dataclass(frozen=True)
class VirtualDeviceProperties:
    """What ``torch.cuda.get_device_properties()`` returns for the virtual device."""

    name: str = DEVICE_NAME
    major: int = CAPABILITY[0]
    minor: int = CAPABILITY[1]
    total_memory: int = TOTAL_MEMORY
    multi_processor_count: int = 132
    is_integrated: bool = False
    is_multi_gpu_board: bool = False
    max_threads_per_multi_processor: int = 2048
    warp_size: int = 32
    regs_per_multiprocessor: int = 65536
    L2_cache_size: int = 50 * 1024**2
    gcnArchName: str = ""
    uuid: str = "00000000-0000-0000-0000-000000000000"


_GRAPHS = (
    "CUDA graphs capture the kernels a GPU runs, and the virtual device of a machine without CUDA runs none; "
    "check the program with graphs turned off (most frameworks have a flag), or on a machine with CUDA"
)
_EXTENSION = (
    "a custom CUDA kernel runs only on a GPU, and its reads and writes are invisible to dnsse; check the program "
    "with the kernel's PyTorch reference implementation, or on a machine with CUDA"
)
_TRITON = (
    "Triton kernels run only on a GPU; check the program with the kernel's PyTorch reference implementation, "
    "or on a machine with CUDA"
)
_EXTERNAL = "a stream made outside torch is not one of the virtual device's streams; create it with torch.cuda.Stream()"


def _in_rank(virtual: Callable[..., Any], original: Callable[..., Any]) -> Callable[..., Any]:
    """``virtual`` inside a controlled rank, torch's ``original`` anywhere else."""

    @functools.wraps(original)
    def either(*args: Any, **kwargs: Any) -> Any:
        if rank_here() is None:
            return original(*args, **kwargs)
        return virtual(*args, **kwargs)

    return either


def _refusing(api: str, advice: str, original: Callable[..., Any]) -> Callable[..., Any]:
    def refused(*args: Any, **kwargs: Any) -> Any:
        refuse(api, advice)

    return _in_rank(refused, original)


def _set_device(device: object) -> None:
    index = device.index if isinstance(device, torch.device) else device
    if isinstance(index, str):
        index = torch.device(index).index
    state = rank_here()
    if isinstance(index, int) and state is not None:
        if not 0 <= index < state.world.size:
            raise RuntimeError(f"CUDA error: invalid device ordinal {index} (the rank sees {state.world.size} devices)")
        device_of(state).index = index


class VirtualDeviceContext(torch.cuda.device):
    """``with torch.cuda.device(i):``: inside a rank, ``i`` is the current device within the block."""

    def __enter__(self) -> None:
        state = rank_here()
        if state is None:
            super().__enter__()
            return
        device = device_of(state)
        self.prev_idx = device.index
        if self.idx is not None and self.idx >= 0:
            _set_device(self.idx)

    def __exit__(self, *exc: object) -> bool:
        state = rank_here()
        if state is None:
            return super().__exit__(*exc)
        device_of(state).index = self.prev_idx
        return False


_TORCH_GENERATOR = torch.Generator


class _GeneratorType(type):
    """Makes ``torch.Generator`` a stand-in that builds torch's own generators, for which ``isinstance`` holds."""

    def __instancecheck__(cls, instance: object) -> bool:
        return isinstance(instance, _TORCH_GENERATOR)

    def __subclasscheck__(cls, subclass: type) -> bool:
        return issubclass(subclass, _TORCH_GENERATOR)

    def __call__(cls, device: object = "cpu") -> Any:
        if rank_here() is not None and _names_cuda(device):
            device = "cpu"  # a cuda tensor's random numbers come from a CPU generator here
        return _TORCH_GENERATOR(device)


class VirtualGenerator(metaclass=_GeneratorType):
    """``torch.Generator(device="cuda")`` inside a rank: a CPU generator."""


def _names_cuda(device: object) -> bool:
    if isinstance(device, torch.device):
        return device.type == "cuda"
    return isinstance(device, str) and device.startswith("cuda")


def _current_device() -> int:
    state = rank_here()
    return device_of(state).index if state is not None else 0


def _device_count() -> int:
    state = rank_here()
    return state.world.size if state is not None else 0


def synchronize_streams() -> None:
    """The host waits for every stream the rank created, and knows their work finished."""
    state = rank_here()
    if state is None or state.device is None:
        return
    for stream in cuda_streams.every_stream(state.device):
        stream.finish_all()
    state.device.synchronized()


def _nvtx_ranges() -> list[str]:
    return device_of(rank_here()).nvtx  # type: ignore[arg-type]  # called inside a rank only


def _nvtx_push(message: str) -> int:
    ranges = _nvtx_ranges()
    ranges.append(message)
    return len(ranges) - 1


def _nvtx_pop() -> int:
    ranges = _nvtx_ranges()
    if ranges:
        ranges.pop()
    return len(ranges)


def _load_extension(original: Callable[..., Any]) -> Callable[..., Any]:
    """``load``/``load_inline`` of CUDA sources is refused; a CPU-only extension builds as usual."""
    signature = inspect.signature(original)

    @functools.wraps(original)
    def load(*args: Any, **kwargs: Any) -> Any:
        given = signature.bind_partial(*args, **kwargs).arguments
        sources = given.get("sources") or []
        files = [sources] if isinstance(sources, str) else list(sources)
        cuda = given.get("with_cuda") or given.get("cuda_sources") or any(f.endswith((".cu", ".cuh")) for f in files)
        if cuda and rank_here() is not None:
            refuse(f"torch.utils.cpp_extension.{original.__name__} (CUDA sources)", _EXTENSION)
        return original(*args, **kwargs)

    return load


def query_stand_ins(cuda_notice: Callable[[str], None]) -> Iterator[tuple[object, str, object]]:
    """(owner, name, replacement) for ``torch.cuda``'s device, stream, memory and profiling entry points."""
    cuda = torch.cuda
    memory = torch.cuda.memory

    def set_device(device: object) -> None:
        cuda_notice("torch.cuda.set_device")
        _set_device(device)

    yield cuda, "set_device", _in_rank(set_device, lambda device: cuda_notice("torch.cuda.set_device"))
    yield cuda, "current_device", _in_rank(_current_device, lambda: 0)
    yield cuda, "device", VirtualDeviceContext
    yield torch, "Generator", VirtualGenerator
    yield cuda, "device_count", _in_rank(_device_count, cuda.device_count)
    yield cuda, "is_available", _in_rank(lambda: True, cuda.is_available)
    # is_initialized() stays False: torch would run its queued seeding calls, which need real devices.
    yield cuda, "init", _in_rank(lambda: None, cuda.init)
    # A cuda tensor's random numbers come from the CPU's generator here: its state is the device's.
    yield cuda, "get_rng_state", _in_rank(lambda device="cuda": torch.get_rng_state(), cuda.get_rng_state)
    yield cuda, "set_rng_state", _in_rank(lambda state, device="cuda": torch.set_rng_state(state), cuda.set_rng_state)
    yield cuda, "get_rng_state_all", _in_rank(lambda: [torch.get_rng_state()] * _device_count(), cuda.get_rng_state_all)
    yield cuda, "set_rng_state_all", _in_rank(lambda states: torch.set_rng_state(states[0]), cuda.set_rng_state_all)
    yield cuda, "is_bf16_supported", _in_rank(lambda including_emulation=True: True, cuda.is_bf16_supported)
    yield cuda, "get_device_name", _in_rank(lambda device=None: DEVICE_NAME, cuda.get_device_name)
    yield cuda, "get_device_capability", _in_rank(lambda device=None: CAPABILITY, cuda.get_device_capability)
    yield cuda, "get_device_properties", _in_rank(lambda device=None: VirtualDeviceProperties(), cuda.get_device_properties)
    yield cuda, "get_arch_list", _in_rank(lambda: ["sm_90"], cuda.get_arch_list)

    zero = lambda device=None: 0  # noqa: E731 - the counters of a device that holds nothing
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved"):
        for owner in (cuda, memory):
            yield owner, name, _in_rank(zero, getattr(memory, name))
    for name in ("reset_peak_memory_stats", "reset_max_memory_allocated", "reset_accumulated_memory_stats", "empty_cache"):
        for owner in (cuda, memory):
            yield owner, name, _in_rank(lambda device=None: None, getattr(memory, name))
    for owner in (cuda, memory):
        yield owner, "mem_get_info", _in_rank(lambda device=None: (TOTAL_MEMORY, TOTAL_MEMORY), memory.mem_get_info)
        yield owner, "memory_stats", _in_rank(lambda device=None: {}, memory.memory_stats)

    yield cuda, "Stream", cuda_streams.VirtualStream
    yield cuda, "Event", cuda_streams.VirtualEvent
    yield cuda, "StreamContext", cuda_streams.StreamContext
    yield cuda, "stream", _in_rank(cuda_streams.stream, cuda.stream)
    yield cuda, "current_stream", cuda_streams.current_stream
    yield cuda, "default_stream", cuda_streams.default_stream
    yield cuda, "set_stream", cuda_streams.set_stream
    # No stream holds memory here: the caching allocator, whose reuse record_stream delays, is not modelled.
    yield torch.Tensor, "record_stream", _in_rank(lambda tensor, stream: None, torch.Tensor.record_stream)
    yield cuda, "ExternalStream", _refusing("torch.cuda.ExternalStream", _EXTERNAL, cuda.ExternalStream)

    yield cuda.nvtx, "range_push", _in_rank(_nvtx_push, cuda.nvtx.range_push)
    yield cuda.nvtx, "range_pop", _in_rank(_nvtx_pop, cuda.nvtx.range_pop)
    yield cuda.nvtx, "mark", _in_rank(lambda message: None, cuda.nvtx.mark)
    yield cuda.nvtx, "range_start", _in_rank(lambda message: 0, cuda.nvtx.range_start)
    yield cuda.nvtx, "range_end", _in_rank(lambda range_id: None, cuda.nvtx.range_end)

    for name in ("CUDAGraph", "graph", "make_graphed_callables"):
        yield cuda, name, _refusing(f"torch.cuda.{name}", _GRAPHS, getattr(cuda, name))

    from torch.utils import cpp_extension

    for name in ("load", "load_inline"):
        yield cpp_extension, name, _load_extension(getattr(cpp_extension, name))
