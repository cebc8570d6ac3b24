"""CUDA programs on a machine without CUDA: every ``cuda`` device is the CPU.

A DDP or FSDP program is written for GPUs (``.to(rank)``, ``.cuda()``,
``device="cuda"``, ``init_device_mesh("cuda", ...)``, ``DDP(device_ids=[rank])``).
dnsse checks the concurrency of the program, not its kernels, so where CUDA
is missing :func:`on_cpu` (called by each rank's torch function mode, see
:mod:`.rank_mode`) turns every CUDA device a torch call names into the CPU, and
:func:`cuda_stand_ins` gives the few ``torch.cuda`` and DDP entry points that
would refuse a CPU. The first such rewrite is reported once (``notice``).
A mesh of ``cuda`` devices on a rank that did not choose a backend gets
NCCL's semantics, and ``torch.cuda.synchronize()`` waits for the rank's NCCL
streams (see :mod:`.streams`).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterator

import torch

from dnsse.engine.uncontrolled import refuse
from dnsse.frameworks.torch_dist.cuda_queries import query_stand_ins, synchronize_streams
from dnsse.frameworks.torch_dist.streams import wait_for
from dnsse.frameworks.torch_dist.world import choose_backend, rank_here

# Asked once, before anything is patched: inside a rank torch.cuda.is_available() answers for the virtual device.
MACHINE_HAS_CUDA = torch.cuda.is_available()
_CPU = torch.device("cpu")
# What torch.cuda.nccl.version() answers here: torch's CPU build has no NCCL to ask.
_NCCL_VERSION = (2, 27, 5)
# Tensor.to and what Module.to parses its arguments with: both take a device anywhere after the first.
_MOVES = {torch.Tensor.to, torch._C._nn._parse_to}
# Host memory needs no pinning.
_NO_OPS = {torch.Tensor.pin_memory}


def _is_cuda(device: object) -> bool:
    if isinstance(device, torch.device):
        return device.type == "cuda"
    return isinstance(device, str) and device.startswith("cuda")


def on_cpu(func: Any, args: tuple, kwargs: dict, notice: Callable[[str], None]) -> tuple[tuple, dict] | None:
    """The call with every CUDA device it names made the CPU; ``None`` for ``Tensor.cuda()`` (a no-op here)."""
    if func is torch.Tensor.cuda:
        notice("Tensor.cuda()")
        return None
    if func in _NO_OPS:
        return None
    if func in _MOVES and args:
        first = 1 if func is torch.Tensor.to else 0
        args = (*args[:first], *(_cpu(a, notice) for a in args[first:]))
    device = kwargs.get("device")
    if device is not None and (_is_cuda(device) or isinstance(device, int)):
        notice(f"device={device!r}")
        kwargs = {**kwargs, "device": _CPU}
    return args, kwargs


def uploads(func: Any, args: tuple, kwargs: dict) -> bool:
    """Is this call a copy of a tensor from the host to a CUDA device (``Tensor.cuda()``, ``Tensor.to("cuda")``)?"""
    if func is torch.Tensor.cuda:
        return True
    if func is not torch.Tensor.to:
        return False
    device = kwargs.get("device")
    return _is_cuda(device) or any(_is_cuda(a) or (isinstance(a, int) and not isinstance(a, bool)) for a in args[1:2])


def _cpu(value: object, notice: Callable[[str], None]) -> object:
    # Tensor.to(0) and Tensor.to("cuda:1") name devices; Tensor.to(torch.float16) does not.
    if _is_cuda(value) or (isinstance(value, int) and not isinstance(value, bool)):
        notice(f"Tensor.to({value!r})")
        return _CPU
    return value


def cuda_stand_ins(notice: Callable[[str], None]) -> Iterator[tuple[object, str, object]]:
    """(owner, name, replacement) for the CUDA entry points that would refuse to run on CPU."""
    from torch.distributed import device_mesh
    from torch.nn.parallel import DistributedDataParallel

    yield from query_stand_ins(notice)
    yield torch.cuda, "synchronize", synchronize
    # torch's logging of a call on an "nccl" group (DCP's save and load, say) asks for NCCL's version.
    yield torch.cuda.nccl, "version", lambda: _NCCL_VERSION

    init_ddp = DistributedDataParallel.__init__

    @functools.wraps(init_ddp)
    def ddp_on_cpu(self: Any, module: Any, device_ids: Any = None, output_device: Any = None, *args: Any, **kw: Any):
        if device_ids is not None and all(p.device.type == "cpu" for p in module.parameters()):
            notice(f"DistributedDataParallel(device_ids={device_ids!r})")
            device_ids, output_device = None, None
        init_ddp(self, module, device_ids, output_device, *args, **kw)

    yield DistributedDataParallel, "__init__", ddp_on_cpu

    init_mesh = device_mesh.init_device_mesh

    @functools.wraps(init_mesh)
    def mesh_on_cpu(device_type: str, *args: Any, **kw: Any) -> Any:
        if device_type.startswith("cuda"):
            notice(f'init_device_mesh("{device_type}")')
            device_type = "cpu"
            state = rank_here()
            if state is not None and not state.init_called:
                choose_backend(state, "nccl")  # what torch picks for a CUDA mesh
        return init_mesh(device_type, *args, **kw)

    yield device_mesh, "init_device_mesh", mesh_on_cpu

    # SyncBatchNorm's statistics kernels exist for CUDA only: a CUDA program's layer cannot run here.
    from torch.nn.modules.batchnorm import SyncBatchNorm

    sync_forward = SyncBatchNorm.forward

    @functools.wraps(sync_forward)
    def sync_batch_norm_on_cpu(self: Any, input: torch.Tensor) -> torch.Tensor:
        if self.training and input.device.type == "cpu" and _cuda_program():
            refuse("torch.nn.SyncBatchNorm (training) of a CUDA program on a machine without CUDA", _SYNC_BATCH_NORM)
        return sync_forward(self, input)

    yield SyncBatchNorm, "forward", sync_batch_norm_on_cpu

    passing = DistributedDataParallel._passing_sync_batchnorm_handle

    @functools.wraps(passing)
    def sync_batch_norm_in_ddp(self: Any, module: Any) -> None:
        if not _cuda_program():
            passing(self, module)  # a CPU program: DDP refuses the layer, as it does under gloo
        # A CUDA program's layers are judged when they run (above): in eval mode they run on the CPU.

    yield DistributedDataParallel, "_passing_sync_batchnorm_handle", sync_batch_norm_in_ddp


_SYNC_BATCH_NORM = (
    "dnsse runs a CUDA program's ranks on the CPU when the machine has no CUDA, and SyncBatchNorm's "
    "statistics kernels (torch.batch_norm_stats) exist only for CUDA; check the program on a machine with "
    "CUDA, or with BatchNorm in place of SyncBatchNorm (its all-gathers then go unchecked)"
)


def _cuda_program() -> bool:
    """Whether the calling rank's program asked for CUDA or NCCL, which run on the CPU here."""
    state = rank_here()
    return state is not None and state.world.cuda_requested


def synchronize(device: object = None) -> None:
    """``torch.cuda.synchronize()``: the host waits for every stream, NCCL's included."""
    state = rank_here()
    if state is None:
        return
    synchronize_streams()
    wait_for(state, state.streams.pending(), "torch.cuda.synchronize() waits for the NCCL streams")
    # Every NCCL operation issued before is complete: its buffers may be read (gloo's know nothing of it).
    state.unsettled[:] = [entry for entry in state.unsettled if not entry.on_stream]
