"""Reads of buffers that belong to an unfinished async operation.

Between issuing an async collective or ``irecv`` and ``Work.wait()``, the
output buffers belong to the backend: what a read sees depends on timing
(gloo may or may not have written yet; NCCL's stream certainly has not). The
write side is caught by :mod:`.work`'s snapshots; this module catches reads,
on every schedule, at the line that reads. A read is a torch call made by
the program's own code (not by torch's internals, which DDP and FSDP use
correctly) whose tensor arguments overlap an unsettled buffer's memory. The
bug is an ``exception`` whose message reads::

    async <op> buffer read before Work.wait() on rank <r> at <file>:<line> (issued at <file>:<line>)
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Iterable

import torch
import torch.overrides
from torch.distributed._functional_collectives import AsyncCollectiveTensor

from dnsse.engine.bugs import Bug, BugKind
from dnsse.engine.location import frame_location

_TORCH_DIR = os.path.dirname(torch.__file__)
_OVERRIDES = torch.overrides.__file__


@dataclass(frozen=True)
class Unsettled:
    """One async operation's output memory, as byte ranges."""

    op: str
    site: str
    spans: tuple[tuple[int, int], ...]
    # Run on an NCCL stream: torch.cuda.synchronize() completes it.
    on_stream: bool = False


def spans_of(tensors: Iterable[torch.Tensor]) -> tuple[tuple[int, int], ...]:
    found = []
    for tensor in tensors:
        if tensor.numel() == 0:
            continue
        extent = 1 + sum((size - 1) * abs(stride) for size, stride in zip(tensor.shape, tensor.stride()))
        start = tensor.data_ptr()
        found.append((start, start + extent * tensor.element_size()))
    return tuple(found)


def _read(value: object) -> bool:
    # Functional collectives hand out AsyncCollectiveTensors, which wait for
    # their collective when first used: reading one is correct.
    return isinstance(value, torch.Tensor) and not isinstance(value, AsyncCollectiveTensor)


def _tensors(values: Iterable[object]) -> Iterable[torch.Tensor]:
    for value in values:
        if _read(value):
            yield value  # type: ignore[misc]
        elif isinstance(value, (list, tuple)):
            yield from (v for v in value if _read(v))


# Calls that look at a tensor's metadata, never at its data.
_METADATA = frozenset(
    {"__get__", "size", "stride", "dim", "numel", "element_size", "storage_offset", "is_contiguous", "__len__",
     "data_ptr", "untyped_storage", "_make_wrapper_subclass", "detach", "view", "as_strided", "__hash__"}
)


def _writes(func: object) -> bool:
    """In-place calls are writes, which the snapshots of :mod:`.work` report with what changed."""
    name = getattr(func, "__name__", "")
    return name.startswith("__i") or name == "__setitem__" or (name.endswith("_") and not name.endswith("__"))


def overlapping(unsettled: list[Unsettled], func: object, args: tuple, kwargs: dict) -> Unsettled | None:
    """The unsettled operation whose buffer this call reads, if any."""
    if _writes(func):
        return None
    return touched(unsettled, func, args, kwargs)


def touched(entries: list[Unsettled], func: object, args: tuple, kwargs: dict) -> Unsettled | None:
    """The first of ``entries`` whose memory this call reads or writes, if any."""
    if getattr(func, "__name__", "") in _METADATA:
        return None
    for tensor in _tensors((*args, *kwargs.values())):
        if tensor.numel() == 0 or tensor.is_meta:
            continue
        (start, end), = spans_of([tensor])
        for entry in entries:
            if any(start < high and low < end for low, high in entry.spans):
                return entry
    return None


def program_frame(source_files: frozenset[str], depth: int = 2) -> str | None:
    """``file:line`` of the program's code when it made this torch call itself.

    The call is looked for ``depth`` frames above this function's (the
    caller of the mode's ``__torch_function__``, where that calls this
    function through one helper).

    Calls torch's own code makes (DDP, FSDP, functional collectives and the
    optimizers, which wait correctly or read on the program's behalf) are
    not judged: only the program's direct call, or the torch function it
    called directly, counts.
    """
    frame = sys._getframe(depth)
    while frame is not None and frame.f_code.co_filename == _OVERRIDES:
        frame = frame.f_back
    if frame is not None and frame.f_code.co_filename.startswith(_TORCH_DIR):
        frame = frame.f_back  # a torch function written in Python, as the program called it
    if frame is None or frame.f_code.co_filename not in source_files:
        return None
    return frame_location(frame)


def read_bug(entry: Unsettled, rank: int, where: str, agent: str) -> Bug:
    return Bug(
        BugKind.EXCEPTION,
        f"async {entry.op} buffer read before Work.wait() on rank {rank} at {where} (issued at {entry.site})",
        details=[
            f"rank {rank} issued {entry.op} at {entry.site} and read its buffer at {where} before the operation "
            "completed; what it reads depends on timing. Call Work.wait() before reading the buffer"
        ],
        agent=agent,
    )
