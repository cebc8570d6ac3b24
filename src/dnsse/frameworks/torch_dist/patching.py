"""Installing the controlled API into ``torch.distributed`` for a campaign.

Both ``torch.distributed`` and ``torch.distributed.distributed_c10d`` get the
controlled functions, so ``dist.all_reduce`` and code that imported from
``distributed_c10d`` see the same thing; everything is put back on exit.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import torch
import torch.distributed
import torch.distributed.distributed_c10d

from dnsse.frameworks.torch_dist import communication, process_groups
from dnsse.frameworks.torch_dist.groups import ProcessGroup, namespace_class
from dnsse.frameworks.torch_dist.work import Work

_FUNCTIONS = (
    process_groups.init_process_group,
    process_groups.destroy_process_group,
    process_groups.is_initialized,
    process_groups.is_available,
    process_groups.get_rank,
    process_groups.get_world_size,
    process_groups.get_backend,
    process_groups.new_group,
    process_groups.get_process_group_ranks,
    process_groups.get_global_rank,
    process_groups.get_group_rank,
    communication.all_reduce,
    communication.broadcast,
    communication.reduce,
    communication.all_gather,
    communication.all_gather_into_tensor,
    communication.gather,
    communication.scatter,
    communication.reduce_scatter,
    communication.reduce_scatter_tensor,
    communication.all_to_all,
    communication.all_to_all_single,
    communication.barrier,
    communication.monitored_barrier,
    communication.all_gather_object,
    communication.broadcast_object_list,
    communication.gather_object,
    communication.scatter_object_list,
    communication.send,
    communication.recv,
    communication.isend,
    communication.irecv,
    communication.send_object_list,
    communication.recv_object_list,
    communication.batch_isend_irecv,
)

_MISSING = object()


def controlled_api(world_group: ProcessGroup) -> dict[str, object]:
    """Name -> replacement, for everything a program may take from ``torch.distributed``."""
    api: dict[str, object] = {function.__name__: function for function in _FUNCTIONS}
    api["P2POp"] = communication.P2POp
    api["Work"] = Work
    api["group"] = namespace_class("group", world_group)
    api["GroupMember"] = namespace_class("GroupMember", world_group)
    return api


@contextlib.contextmanager
def installed(api: dict[str, object]) -> Iterator[None]:
    modules = (torch.distributed, torch.distributed.distributed_c10d)
    saved = [(module, name, module.__dict__.get(name, _MISSING)) for module in modules for name in api]
    threads = torch.get_num_threads()
    for module in modules:
        for name, value in api.items():
            setattr(module, name, value)
    # Ranks take turns; intra-op threads would only add start-up cost to every small op.
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        for module, name, value in reversed(saved):
            if value is _MISSING:
                delattr(module, name)
            else:
                setattr(module, name, value)
