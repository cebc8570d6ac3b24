"""Gradient clipping with DDP: after backward, or (the bug) inside an autograd hook.

DDP's reducer all-reduces a bucket of gradients as soon as every gradient in
it is ready, from its autograd hook, while the rest of backward still runs;
it waits for the bucket's all-reduce only at the end of the backward pass.
With ``gradient_as_bucket_view=True`` each ``param.grad`` is a view of its
bucket. DDP starts with one bucket; after the first iteration it rebuilds
them in the order gradients became ready, closing each once it holds
``bucket_cap_mb``: here the last layer is one bucket and the first weight
another, so the last layer's bucket is launched before the first weight's
gradient exists. Both versions train two steps.

``train_clip_after_backward`` clips after ``backward()`` returns, as the
PyTorch docs do: correct. ``train_clip_in_hook`` clips every gradient from a
post-accumulate-grad hook of the first weight, which runs while the last
layer's bucket is still being all-reduced: a rank may change a bucket
during its all-reduce (on a real backend the reduced values then depend on
timing).
"""

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

WIDTH = 16
BUCKET_MB = 0.001  # 1048 bytes: the last layer (1088 bytes) fills one bucket, the first weight (1024) another


def build(rank):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(WIDTH, WIDTH, bias=False), nn.ReLU(), nn.Linear(WIDTH, WIDTH))
    return model, DDP(model, gradient_as_bucket_view=True, bucket_cap_mb=BUCKET_MB)


def halve(parameters):
    with torch.no_grad():
        for p in parameters:
            if p.grad is not None:
                p.grad.mul_(0.5)


def train(rank, ddp, optimizer, clip_after):
    torch.manual_seed(rank)
    for _ in range(2):
        optimizer.zero_grad()
        ddp(torch.randn(2, WIDTH)).pow(2).sum().backward()
        if clip_after:
            halve(ddp.parameters())
        optimizer.step()


def train_clip_after_backward(rank, world_size):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    model, ddp = build(rank)
    train(rank, ddp, torch.optim.SGD(ddp.parameters(), lr=0.01), clip_after=True)
    everyone = [torch.zeros(WIDTH) for _ in range(world_size)]
    dist.all_gather(everyone, model[2].bias.detach().clone())
    assert all(torch.equal(everyone[0], other) for other in everyone), "ranks disagree on the weights"
    dist.destroy_process_group()


def train_clip_in_hook(rank, world_size):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    model, ddp = build(rank)
    # BUG: runs during backward, while the last layer's bucket is being all-reduced.
    model[0].weight.register_post_accumulate_grad_hook(lambda weight: halve(ddp.parameters()))
    train(rank, ddp, torch.optim.SGD(ddp.parameters(), lr=0.01), clip_after=False)
    dist.destroy_process_group()
