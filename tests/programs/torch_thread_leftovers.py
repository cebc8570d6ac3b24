"""Ranks that leave per-thread state behind: the next execution's ranks must start as in new threads.

Each rank reports what it found at its start (through the all-gathered
tensor, checked by the test), then leaves its thread changed.
"""

import contextvars
import decimal
import sys
import threading

import torch
import torch.distributed as dist

_VARIABLE = sys.__dict__.setdefault("_dnsse_test_variable", contextvars.ContextVar("leftover", default=0))


def _found_as_new(rank, world_size, local):
    """Every rank checks that it found its thread as a new one."""
    found = torch.tensor([
        float(torch.is_grad_enabled()),
        float(decimal.getcontext().prec),
        float(torch.is_inference_mode_enabled()),
        float(hasattr(local, "rank")),
        float(_VARIABLE.get()),
    ])
    everyone = [torch.zeros(5) for _ in range(world_size)]
    dist.all_gather(everyone, found)
    for seen in everyone:
        assert seen.tolist() == [1.0, 28.0, 0.0, 0.0, 0.0], seen


def _library_local():
    # One for the process, as a library's module-level thread-local would be (this module is copied per rank).
    return sys.__dict__.setdefault("_dnsse_test_library_local", threading.local())


def leaves_locals(rank, world_size):
    local = _library_local()
    _found_as_new(rank, world_size, local)
    # Left behind: a decimal context (a context variable), a thread-local value, a context variable.
    decimal.getcontext().prec = 5
    local.rank = rank
    _VARIABLE.set(1)


def leaves_grad_mode(rank, world_size):
    _found_as_new(rank, world_size, _library_local())
    torch.set_grad_enabled(False)  # per thread in torch


def new_groups(rank, world_size):
    pair = dist.new_group([0, 1])
    everyone = dist.new_group(list(range(world_size)))
    t = torch.ones(1)
    dist.all_reduce(t, group=everyone)
    if rank < 2:
        dist.all_reduce(t, group=pair)
    assert t.item() == (2 * world_size if rank < 2 else world_size), t
