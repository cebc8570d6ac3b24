"""Programs whose bugs hide behind number inputs that carry no Range, as users write them."""

import torch
import torch.distributed as dist


def moe_gradient_sync(rank, world_size, tokens: int = 32):
    """Mixture-of-experts: an expert that got no tokens on this rank skips its gradient all_reduce."""
    mine = tokens // world_size + (1 if rank < tokens % world_size else 0)
    grads = [torch.ones(2) for _ in range(2)]
    for expert in range(2):
        load = mine // 2 + (1 if expert < mine % 2 else 0)
        if load > 0:
            dist.all_reduce(grads[expert])


def scaled_gradient_sync(rank, world_size, loss_scale: float = 1024.0):
    """Each rank checks its own scaled float16 gradient for overflow; rank 1's is twice rank 0's."""
    grad = torch.full((4,), 1.0 + rank, dtype=torch.float16) * loss_scale
    if torch.isfinite(grad).all():
        dist.all_reduce(grad)
