"""Every kernel's reads and writes, seen through a torch dispatch mode.

torch's CUDA sanitizer (``torch.cuda._sanitizer``) sees each ATen operator
under a ``TorchDispatchMode`` and reads its schema: an argument whose alias
annotation says it is written (``Tensor(a!)``) is written, a view's input is
touched for its metadata only, any other tensor argument is read, and the
outputs are written unless they alias an input. This mode does the same and
hands each kernel to the rank's :class:`~.virtual_device.RankDevice`, on the
current stream's timeline.

It is pushed on the rank's thread when the rank creates its first stream
(before that nothing can race) and popped when the rank ends. Only the
program's kernels count: the ones torch runs on the program's behalf
(autograd, optimizers, DDP) are judged at the program's line that caused
them, and dnsse's own tensor work (a collective's copies) is not judged.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Iterator

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import dnsse
from dnsse.engine.location import frame_location
from dnsse.frameworks.torch_dist.virtual_device import RankDevice

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_DNSSE_DIR = os.path.dirname(dnsse.__file__) + os.sep
# dnsse's modes and the helpers they call on the way to the kernel: the program's call passes through them.
_HERE = os.path.dirname(__file__) + os.sep
_PASSING = frozenset(_HERE + name for name in ("access_mode.py", "rank_mode.py", "mode_off.py", "direct_calls.py"))
def kernel_site(source_files: frozenset[str]) -> str | None:
    """``file:line`` of the program's code that issued the running kernel; ``None`` for dnsse's own work.

    The innermost frame outside torch decides whose kernel it is: dnsse's
    code, or the program (its own file, or a library it calls, in which case
    the program's innermost line that led there is named).
    """
    frame = sys._getframe(2)
    while frame is not None and (frame.f_code.co_filename.startswith(_TORCH_DIR) or frame.f_code.co_filename in _PASSING):
        frame = frame.f_back
    if frame is None or frame.f_code.co_filename.startswith(_DNSSE_DIR):
        return None
    outer = frame
    while outer is not None and outer.f_code.co_filename not in source_files:
        outer = outer.f_back
    return frame_location(outer if outer is not None else frame)


def _tensors(value: object) -> Iterator[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, torch.Tensor):
                yield item


def _arguments(schema: Any, args: tuple, kwargs: dict) -> Iterator[tuple[Any, object]]:
    for index, argument in enumerate(schema.arguments):
        if argument.kwarg_only or index >= len(args):
            if argument.name in kwargs:
                yield argument, kwargs[argument.name]
        else:
            yield argument, args[index]


class DeviceAccessMode(TorchDispatchMode):
    """Logs each of the program's kernels on the rank's virtual device."""

    def __init__(self, device: RankDevice) -> None:
        super().__init__()
        self.device = device

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        device = self.device
        execution = device.state.world.execution
        if device.closed or device.uploading or execution.scheduling:
            return func(*args, **kwargs)
        site = kernel_site(execution.source_files)
        if site is None:
            return func(*args, **kwargs)
        schema = func._schema
        reads: list[torch.Tensor] = []
        writes: list[torch.Tensor] = []
        for argument, value in _arguments(schema, args, kwargs):
            alias = argument.alias_info
            if alias is not None and alias.is_write:
                writes.extend(_tensors(value))
            elif alias is None:
                reads.extend(_tensors(value))
        out = func(*args, **kwargs)
        fresh: list[torch.Tensor] = []
        # A fresh tensor from empty() holds nothing yet: only the kernel that fills it writes.
        if not schema.name.startswith("aten::empty"):
            results = out if isinstance(out, tuple) else (out,)
            for returned, value in zip(schema.returns, results):
                if returned.alias_info is None:
                    fresh.extend(_tensors(value))
        device.kernel(device.current(), func.__name__.split(".")[0], site, reads, writes, fresh)
        return out
