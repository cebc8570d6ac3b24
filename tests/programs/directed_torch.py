"""A loss-scaling step whose overflow check differs between ranks for a narrow band of scales."""

from typing import Annotated

import torch
import torch.distributed as dist

import dnsse


def overflow(rank: int, world_size: int, scale: Annotated[float, dnsse.Range(1.0, 1e6)] = 1.0) -> None:
    grad = torch.tensor([0.5, -2.0, 1.5]) * (rank + 1)
    scaled = grad * scale
    if (scaled).abs().max().item() > 65504.0:
        return  # this rank skips the step; the other one waits in all_reduce
    dist.all_reduce(scaled)
    found_inf = torch.tensor([0.0])
    dist.all_reduce(found_inf)


def overflow_tensor(
    rank: int,
    world_size: int,
    grad: Annotated[torch.Tensor, dnsse.TensorSpec(shape=(3,), low=-100.0, high=100.0)] = None,
    scale: Annotated[float, dnsse.Range(1.0, 1e4)] = 1.0,
) -> None:
    local = grad * (rank + 1)
    if (local * scale).abs().max().item() > 65504.0:
        return
    dist.all_reduce(local)
