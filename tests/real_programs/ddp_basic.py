"""The PyTorch DDP tutorial's ``demo_basic``, as the tutorial writes it.

https://pytorch.org/tutorials/intermediate/ddp_tutorial.html (basic use
case): a toy model wrapped in DistributedDataParallel, one training step.
``demo_basic`` is the tutorial's code with the process launcher left out
(dnsse runs the ranks). ``demo_uneven_inputs`` is the classic bug variant:
the data is split unevenly, so one rank runs one more step than the other,
and its last backward pass waits in an all-reduce nobody joins (in a real
job: a hang until the NCCL timeout). ``demo_uneven_inputs_joined`` is the
fix PyTorch recommends, DDP's ``join()`` context manager.
"""

import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.optim as optim
from torch.nn.parallel import DistributedDataParallel as DDP


def setup(rank, world_size):
    os.environ["MASTER_ADDR"] = "localhost"
    os.environ["MASTER_PORT"] = "12355"
    dist.init_process_group("gloo", rank=rank, world_size=world_size)


def cleanup():
    dist.destroy_process_group()


class ToyModel(nn.Module):
    def __init__(self):
        super(ToyModel, self).__init__()
        self.net1 = nn.Linear(10, 10)
        self.relu = nn.ReLU()
        self.net2 = nn.Linear(10, 5)

    def forward(self, x):
        return self.net2(self.relu(self.net1(x)))


def demo_basic(rank, world_size):
    print(f"Running basic DDP example on rank {rank}.")
    setup(rank, world_size)

    # create model and move it to GPU with id rank
    model = ToyModel().to(rank)
    ddp_model = DDP(model, device_ids=[rank])

    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)

    optimizer.zero_grad()
    outputs = ddp_model(torch.randn(20, 10))
    labels = torch.randn(20, 5).to(rank)
    loss_fn(outputs, labels).backward()
    optimizer.step()

    cleanup()
    print(f"Finished running basic DDP example on rank {rank}.")


def train_on(rank, world_size, batches):
    setup(rank, world_size)
    model = ToyModel().to(rank)
    ddp_model = DDP(model, device_ids=[rank])
    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)
    for inputs, labels in batches:
        optimizer.zero_grad()
        loss_fn(ddp_model(inputs), labels.to(rank)).backward()
        optimizer.step()
    cleanup()


def uneven_batches(rank, world_size):
    # 5 batches dealt round-robin: rank 0 gets 3, rank 1 gets 2.
    data = [(torch.randn(4, 10), torch.randn(4, 5)) for _ in range(5)]
    return data[rank::world_size]


def demo_uneven_inputs(rank, world_size):
    train_on(rank, world_size, uneven_batches(rank, world_size))


def demo_uneven_inputs_joined(rank, world_size):
    setup(rank, world_size)
    model = ToyModel().to(rank)
    ddp_model = DDP(model, device_ids=[rank])
    loss_fn = nn.MSELoss()
    optimizer = optim.SGD(ddp_model.parameters(), lr=0.001)
    with ddp_model.join():
        for inputs, labels in uneven_batches(rank, world_size):
            optimizer.zero_grad()
            loss_fn(ddp_model(inputs), labels.to(rank)).backward()
            optimizer.step()
    cleanup()
