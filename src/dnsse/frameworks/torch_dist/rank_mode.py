"""The torch function mode each rank's thread runs under.

Every torch call the rank makes passes through it, which is how two things
that torch offers no other hook for are done: under NCCL semantics, a call
that touches a buffer of an operation the compute stream waits for waits
until it finished, as the kernel would (:mod:`.streams`); reads of buffers an
async operation still owns are caught (:mod:`.guard`); and, on a machine
without CUDA, CUDA devices become the CPU (:mod:`.cpu_devices`).

A thread a rank starts, and an asyncio task of a rank, runs in an OS thread
of its own here: :func:`rank_carrier` makes it act for the rank, under the
mode. Tasks of one loop, which on a real loop all run in the loop's thread,
share its grad mode and autocast state (:data:`GRAD_AND_AUTOCAST`): a task
that suspends under ``no_grad`` leaves grad off for the next one, as there.
"""

from __future__ import annotations

import _thread
from typing import Any, Callable

import torch

from torch._C._distributed_c10d import _register_process_group
from torch.overrides import TorchFunctionMode

from dnsse.engine.execution import ExecutionAborted
from dnsse.frameworks.torch_dist.access_mode import kernel_site
from dnsse.frameworks.torch_dist.cpu_devices import MACHINE_HAS_CUDA, on_cpu, uploads
from dnsse.frameworks.torch_dist.direct_calls import DIRECT
from dnsse.frameworks.torch_dist.guard import Unsettled, overlapping, program_frame, read_bug, spans_of, touched
from dnsse.frameworks.torch_dist.mode_off import RankModeMark, apart, rank_mode_on_top
from dnsse.frameworks.torch_dist.streams import wait_for
from dnsse.frameworks.torch_dist.virtual_device import RankDevice
from dnsse.frameworks.torch_dist.world import RankState, act_for, rank_here
from dnsse.frameworks.threads.inheritance import ThreadState

_AUTOCAST_DEVICES = ("cpu", "cuda")
# Reads of a tensor's data on the host that reach no kernel (the dispatch mode of .access_mode sees the rest).
_HOST_READS = frozenset({torch.Tensor.tolist, torch.Tensor.numpy, torch.Tensor.__array__})
# The calls that run a backward pass: the program's Python code runs inside them (custom Function.backward,
# tensor and module hooks) and must be under the mode as its other code is.
_BACKWARD = frozenset({torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad})
# Per OS thread: the rank's mode while it handles one of _BACKWARD (taken off the stack meanwhile).
_backward_under = _thread._local()
_torch_engine_run_backward = torch.autograd._engine_run_backward


class RankMode(RankModeMark, TorchFunctionMode):
    def __init__(self, state: RankState, cuda_on_cpu: bool) -> None:
        super().__init__()
        self.state = state
        self.cuda_on_cpu = cuda_on_cpu

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        state = self.state
        if state.streams.fence and not state.world.execution.scheduling:
            self._after_stream_work(func, args, kwargs)
        if state.unsettled:
            self.guard_reads(func, args, kwargs)
        device = state.device
        if device is not None and device.tracking:
            if func in _HOST_READS:
                site = kernel_site(state.world.execution.source_files)
                if site is not None:
                    device.host_read(args[0], func.__name__, site)
            elif uploads(func, args, kwargs) and not device.holds(args[0]):
                return self._upload(device, func, args, kwargs)
        return self._call(func, args, kwargs)

    def _call(self, func: Any, args: tuple, kwargs: dict) -> Any:
        if self.cuda_on_cpu:
            moved = on_cpu(func, args, kwargs, self.state.world.on_cuda_request)
            if moved is None:
                return args[0]
            args, kwargs = moved
        if func in _BACKWARD:
            # torch takes the mode off its stack while the mode handles a call, and the autograd engine
            # runs the whole pass inside this one: engine_run_backward puts it back for the pass.
            _backward_under.mode = self
            try:
                return func(*args, **kwargs)
            finally:
                _backward_under.mode = None
        return func(*args, **kwargs)

    def _upload(self, device: RankDevice, func: Any, args: tuple, kwargs: dict) -> Any:
        """A copy from the host to the device: a new device buffer, written by the current stream.

        Here the "device" tensor may be the host tensor itself; what the
        host did to it before is no concern of the streams, so its history
        starts afresh, and the copy's read of host memory is not judged.
        """
        site = kernel_site(self.state.world.execution.source_files)
        device.uploading += 1
        try:
            result = self._call(func, args, kwargs)
        finally:
            device.uploading -= 1
        if site is not None and isinstance(result, torch.Tensor):
            device.uploaded(result, site)
        return result

    def guard_reads(self, func: Any, args: tuple, kwargs: dict) -> None:
        """Fail the execution when the program's own call reads a buffer of an unsettled async operation."""
        state = self.state
        entry = overlapping(state.unsettled, func, args, kwargs)
        if entry is not None:
            execution = state.world.execution
            where = program_frame(execution.source_files, depth=3)  # above this method and __torch_function__
            if where is not None:
                execution.fail(read_bug(entry, state.rank, where, state.agent.name))
                raise ExecutionAborted()

    def fenced(self) -> bool:
        """Whether a call must first wait for NCCL work the compute stream waits for (see :meth:`_after_stream_work`)."""
        state = self.state
        return bool(state.streams.fence) and not state.world.execution.scheduling

    def _after_stream_work(self, func: Any, args: tuple, kwargs: dict) -> None:
        """A kernel launched after a stream-level wait runs after the work waited for: wait for it here."""
        streams = self.state.streams
        streams.fence = [op for op in streams.fence if not op.done]
        fenced = [Unsettled(op.op, op.site, spans_of(op.buffers())) for op in streams.fence]
        if fenced and touched(fenced, func, args, kwargs) is not None:
            name = getattr(func, "__name__", "a torch call")
            wait_for(self.state, streams.fence, f"{name}() waits for the NCCL work the compute stream waits for")


def engine_run_backward(*args: Any, **kwargs: Any) -> Any:
    """torch's entry into the autograd engine, with the rank's mode back on the stack for the pass.

    Past torch's checks for overrides, so the mode does not handle the call
    again. The program's Python code that the pass runs (an
    ``autograd.Function``'s backward, tensor, module and post-accumulate-grad
    hooks) is then under the mode as the rest of its code: a read before
    ``wait()`` there is caught (Megatron's sequence-parallel weight gradient),
    and CUDA devices it names become the CPU. torch's own backward kernels
    are C++ and do not reach the mode.
    """
    mode = getattr(_backward_under, "mode", None)
    if mode is None:
        return _torch_engine_run_backward(*args, **kwargs)
    _backward_under.mode = None
    with mode:
        return _torch_engine_run_backward(*args, **kwargs)


_torch_handle = torch.overrides.handle_torch_function
_modes_enabled = torch._C._is_torch_function_mode_enabled
_modes = torch._C._len_torch_function_stack


def handle_c10d(public_api: Callable, relevant_args: Any, *args: Any, **kwargs: Any) -> Any:
    """``torch.distributed``'s ``handle_torch_function``: the same call, without the detour through an idle mode.

    With the rank's mode innermost and nothing for it to do (no buffer to
    guard, no stream to wait for, no device to move), torch's dispatch would
    take the mode off, call :meth:`RankMode.__torch_function__`, which calls
    ``public_api``, and put the mode back: that is done here directly, and
    ``public_api`` dispatches to any other mode or tensor subclass as before.
    The plainest calls skip torch's API too (see :mod:`.direct_calls`).

    While async operations are unsettled the mode would first look for a
    read of their buffers (:meth:`RankMode.guard_reads`); that look is made
    here, as the mode makes it, before a direct call. (The guard judges the
    program's own calls only, and finds this function's frame between the
    program and the mode, so it never fails a c10d call: a collective's
    writes to such a buffer are caught by :mod:`.work`'s snapshots.)
    """
    mode = rank_mode_on_top()
    if mode is not None and "device" not in kwargs and not mode.fenced() and _modes_enabled():  # type: ignore[attr-defined]
        unsettled = mode.state.unsettled  # type: ignore[attr-defined]
        direct = DIRECT.get(public_api)
        if direct is not None and _modes() == 1:  # another mode would see the call
            if unsettled:
                try:
                    apart(mode.guard_reads, public_api, args, kwargs)  # type: ignore[attr-defined]
                except Exception:
                    # torch's path looks again and raises the same, with its own frames in the traceback.
                    return _torch_handle(public_api, relevant_args, *args, **kwargs)
            done = apart(direct, *args, **kwargs)
            if done is not NotImplemented:
                return done
        if not unsettled:
            return apart(public_api, *args, **kwargs)
    return _torch_handle(public_api, relevant_args, *args, **kwargs)


def rank_carrier() -> Callable[[], None]:
    """Called where a thread is started or an asyncio task created: what the new agent's own thread must install.

    Either belongs to the creating rank's process: it acts for that rank,
    under its mode, and finds its groups by name (functional collectives
    look them up in a registry kept per thread here).
    """
    state = rank_here()

    def install() -> None:
        if state is None:
            return
        act_for(state)
        for group, name in list(state.c10d.pg_names.items()):
            _register_process_group(name, group)
        # Left on the thread's mode stack: the thread ends with the agent.
        RankMode(state, cuda_on_cpu=not MACHINE_HAS_CUDA).__enter__()

    return install


def _grad_and_autocast() -> object:
    return torch.is_grad_enabled(), [(d, torch.is_autocast_enabled(d), torch.get_autocast_dtype(d)) for d in _AUTOCAST_DEVICES]


def _set_grad_and_autocast(saved: object) -> None:
    grad, autocast = saved  # type: ignore[misc]
    torch.set_grad_enabled(grad)
    for device, enabled, dtype in autocast:
        torch.set_autocast_enabled(device, enabled)
        torch.set_autocast_dtype(device, dtype)


# torch keeps them per OS thread: all tasks of a loop share them, and see each other's changes.
GRAD_AND_AUTOCAST = ThreadState(_grad_and_autocast, _set_grad_and_autocast)
