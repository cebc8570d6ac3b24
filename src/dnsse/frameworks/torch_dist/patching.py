"""Installing the controlled ``torch.distributed`` for a campaign, and taking it out.

The campaign registers the ``dnsse`` backend, gives each rank its own
process-group state (:mod:`.c10d_world`), replaces the few setup functions
of :mod:`.process_groups` in both ``torch.distributed`` and
``distributed_c10d``, and, where CUDA is missing, the CUDA entry points of
:mod:`.cpu_devices`; asyncio tasks take over their rank's torch state
(:func:`.rank_mode.rank_carrier`). Everything is put back on exit.
"""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator

import torch
import torch.distributed
import torch.multiprocessing
from torch.distributed import distributed_c10d

from dnsse.frameworks.torch_dist import futures
from dnsse.frameworks.torch_dist.c10d_world import RankLocalWorld, register_backend
from dnsse.frameworks.torch_dist.cpu_devices import MACHINE_HAS_CUDA, cuda_stand_ins
from dnsse.frameworks.torch_dist.launcher import REPLACEMENTS as LAUNCHERS
from dnsse.frameworks.torch_dist.process_groups import REPLACEMENTS, new_process_group_helper
from dnsse.frameworks.torch_dist.rank_mode import GRAD_AND_AUTOCAST, engine_run_backward, handle_c10d, rank_carrier
from dnsse.frameworks.torch_dist.uncontrolled import REFUSED
from dnsse.frameworks.threads.inheritance import carry, share
from dnsse.engine.uncontrolled import refused

_MISSING = object()


def _replacements(notice: Callable[[str], None]) -> list[tuple[object, str, object]]:
    found: list[tuple[object, str, object]] = [
        (distributed_c10d, "_world", RankLocalWorld()),
        (distributed_c10d, "_new_process_group_helper", new_process_group_helper),
        # Its collectives dispatch to torch function modes through this name (see handle_c10d).
        (distributed_c10d, "handle_torch_function", handle_c10d),
        # A backward pass runs the program's hooks and autograd Functions under the rank's mode.
        (torch.autograd, "_engine_run_backward", engine_run_backward),
        # Waiting on all of several futures completes those launched in a backward pass first.
        *futures.REPLACEMENTS,
    ]
    for module in (torch.distributed, distributed_c10d):
        found.extend((module, name, function) for name, function in REPLACEMENTS.items())
    # mp.spawn starts controlled ranks (see .launcher).
    found.extend((torch.multiprocessing, name, function) for name, function in LAUNCHERS.items())
    if not MACHINE_HAS_CUDA:
        for owner, name, value in cuda_stand_ins(notice):
            found.append((owner, name, value))
            if name == "init_device_mesh" and hasattr(torch.distributed, name):
                found.append((torch.distributed, name, value))
    return found


@contextlib.contextmanager
def installed(notice: Callable[[str], None]) -> Iterator[None]:
    register_backend()
    replacements = _replacements(notice)
    saved = [(owner, name, owner.__dict__.get(name, _MISSING)) for owner, name, _ in replacements]  # type: ignore[attr-defined]
    threads = torch.get_num_threads()
    for owner, name, value in replacements:
        setattr(owner, name, value)
    # Ranks take turns; intra-op threads would only add start-up cost to every small op.
    torch.set_num_threads(1)
    # Functional collectives find groups by name in a registry: one per rank thread.
    torch._C._distributed_c10d._set_thread_isolation_mode(True)
    # Backward runs on the rank's own thread, so DDP's hooks run under its control.
    autograd_threads = torch.autograd.set_multithreading_enabled(False)
    # Threads and asyncio tasks a rank starts act for it, as in one real process.
    uncarry = carry(rank_carrier)
    # Tasks of a loop share its thread's grad mode, as in one real thread.
    unshare = share(GRAD_AND_AUTOCAST)
    try:
        with refused(REFUSED):
            yield
    finally:
        unshare()
        uncarry()
        autograd_threads.__exit__(None, None, None)
        torch._C._distributed_c10d._set_thread_isolation_mode(False)
        torch.set_num_threads(threads)
        for owner, name, value in reversed(saved):
            if value is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, value)
