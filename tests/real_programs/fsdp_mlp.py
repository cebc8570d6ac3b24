"""FSDP2 (``fully_shard``) on a small MLP, in the style of PyTorch's FSDP2
example (``examples/distributed/FSDP2``): shard each layer, then the root,
and train a few steps with Adam, each rank on its own batches.

``train`` validates on every rank, as FSDP requires: a forward pass
all-gathers the sharded parameters, so every rank must take part.
``train_validate_on_rank0`` is the common bug variant: only rank 0 runs the
validation forward pass, so its all-gathers have no partner (a real job
hangs at the next collective).
"""

import json
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard


class MLP(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, 2 * dim), nn.Linear(2 * dim, dim), nn.Linear(dim, 1)])

    def forward(self, x):
        for layer in self.layers[:-1]:
            x = torch.relu(layer(x))
        return self.layers[-1](x)


def report(rank, model):
    """For the real-gloo comparison test: where it asks, write this rank's final parameters."""
    directory = os.environ.get("DNSSE_COMPARE_DIR")
    if directory:
        values = {name: p.full_tensor().tolist() for name, p in model.named_parameters()}
        with open(os.path.join(directory, f"fsdp-rank{rank}.json"), "w") as file:
            json.dump(values, file)


def run(rank, world_size, validate_everywhere, steps=3, dim=8):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    mesh = init_device_mesh("cuda", (world_size,))
    torch.manual_seed(0)
    model = MLP(dim)
    for layer in model.layers:
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    optim = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(steps):
        torch.manual_seed(100 * rank + step)
        x = torch.randn(4, dim, device="cuda")
        loss = model(x).pow(2).mean()
        loss.backward()
        optim.step()
        optim.zero_grad()
        if validate_everywhere or rank == 0:
            with torch.no_grad():
                model(torch.ones(2, dim, device="cuda"))
    report(rank, model)
    dist.destroy_process_group()


def train(rank, world_size):
    run(rank, world_size, validate_everywhere=True)


def train_validate_on_rank0(rank, world_size):
    run(rank, world_size, validate_everywhere=False)
