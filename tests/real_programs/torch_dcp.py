"""torch.distributed.checkpoint (DCP), as its recipe uses it: every rank saves the
state dict to one directory and loads it back (``dcp.save``/``dcp.load`` with a
checkpoint id, or an explicit ``FileSystemWriter``/``FileSystemReader``),
under gloo or NCCL.

Bug variant: ``load_before_others_saved``, ranks exchanging shards through
files written with ``torch.save`` and no barrier between the save and the
neighbour's load (a race on a file between ranks).
"""
import json
import os

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP


def save(name, rank, **values):
    out = os.environ.get("DNSSE_COMPARE_DIR")
    if out:
        with open(os.path.join(out, f"{name}-rank{rank}.json"), "w") as f:
            json.dump({k: v.tolist() for k, v in values.items()}, f)


def save_load(rank, world_size, backend="gloo"):
    dist.init_process_group(backend)
    torch.manual_seed(0)
    model = DDP(nn.Linear(4, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    model(torch.randn(2, 4) + rank).sum().backward()
    opt.step()
    dcp.save({"model": model.state_dict()}, checkpoint_id="ckpt")
    trained = model.module.weight.detach().clone()
    with torch.no_grad():
        model.module.weight.zero_()
    state = {"model": model.state_dict()}
    dcp.load(state, checkpoint_id="ckpt")
    model.load_state_dict(state["model"])
    assert torch.equal(model.module.weight, trained)
    save("dcp", rank, weight=model.module.weight.detach())


def save_load_nccl(rank, world_size):
    """The same under NCCL (torch logs each DCP call with NCCL's version)."""
    save_load(rank, world_size, backend="nccl")


def save_load_fs(rank, world_size):
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    sd = {"w": model.weight.detach().clone()}
    dcp.save(sd, storage_writer=dcp.FileSystemWriter("fsckpt"))
    back = {"w": torch.zeros(3, 4)}
    dcp.load(back, storage_reader=dcp.FileSystemReader("fsckpt"))
    assert torch.equal(back["w"], sd["w"])
    save("dcpfs", rank, w=back["w"])


def load_before_others_saved(rank, world_size):
    """Each rank saves its shard with torch.save and loads its neighbour's without a barrier."""
    dist.init_process_group("gloo")
    torch.save({"w": torch.full((2,), float(rank))}, f"shard{rank}.pt")
    other = torch.load(f"shard{(rank + 1) % world_size}.pt")
    assert other["w"][0].item() == (rank + 1) % world_size
