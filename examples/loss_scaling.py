"""Mixed-precision data-parallel training with dynamic loss scaling.

Each rank computes fp16 gradients multiplied by the loss scale, all-reduces
them asynchronously (to overlap communication with other work), and skips the
optimizer step, halving the scale, when the reduced gradients overflowed.

The bug: the overflow check reads the gradient bucket before ``Work.wait()``.
Depending on whether the all-reduce has already written the bucket, a rank
checks its own local gradients or the reduced ones. At the step where only
the reduced sum overflows, one rank skips the step and the other goes on to
all-reduce its loss: the ranks issue different collectives, and a real job
hangs at its next collective. This is the class of "found_inf not
synchronised across ranks" bugs of loss scalers; the fix is to check after
``work.wait()``, or to all-reduce the overflow flag.

    dnsse check examples/loss_scaling.py:main
"""

import torch
import torch.distributed as dist


def local_gradients(rank: int, step: int, scale: float) -> torch.Tensor:
    """This rank's gradients for ``step``, scaled and cast to fp16."""
    base = torch.linspace(1.0, 2.0, 8) * (10.0 if rank == 1 else 1.0)
    return (base * scale * (step + 1)).half()


def main(rank: int, world_size: int, steps: int = 4) -> None:
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    weights = torch.zeros(8)
    scale = 1024.0
    for step in range(steps):
        bucket = local_gradients(rank, step, scale)
        work = dist.all_reduce(bucket, async_op=True)
        overflow = not bool(torch.isfinite(bucket).all())  # BUG: reads the bucket before wait()
        work.wait()
        if overflow:
            scale /= 2
            continue
        weights -= 0.01 * bucket.float() / scale / world_size
        loss = weights.sum().reshape(1)
        dist.all_reduce(loss)  # the mean loss, for logging
    dist.destroy_process_group()
