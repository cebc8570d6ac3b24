"""Transfers as real gloo makes them: invisible to autograd."""

import torch
import torch.distributed as dist
import torch.nn as nn


def broadcast_into_parameter(rank, world_size):
    weight = nn.Parameter(torch.full((2,), float(rank)))
    dist.broadcast(weight, src=0)
    assert weight.is_leaf and weight.requires_grad and weight.tolist() == [0.0, 0.0]


def received_tensor_is_detached(rank, world_size):
    w = torch.ones(2, requires_grad=True)
    if rank == 0:
        sent = w * 2
        dist.send(sent, dst=1)
        sent.sum().backward()
    else:
        box = torch.zeros(2)
        dist.recv(box, src=0)
        assert box.grad_fn is None and not box.requires_grad
        (box * w).sum().backward()
        assert w.grad.tolist() == [2.0, 2.0]


def in_place_all_reduce_gradient(rank, world_size):
    w = torch.ones(2, requires_grad=True)
    y = w * 3
    dist.all_reduce(y)
    y.sum().backward()
    assert w.grad.tolist() == [3.0, 3.0], w.grad
