"""Data-parallel training with bucketed, asynchronous gradient all-reduce.

A hand-written DDP reducer, as training frameworks write them: parameters are
grouped into buckets in reverse registration order (gradients become ready
back to front during backward), each bucket is flattened and all-reduced with
``async_op=True`` as soon as its last gradient is ready, and the optimizer
steps after every bucket's ``Work`` was waited on. The model has a small
mixture-of-experts layer: each rank routes its own tokens to the experts by
their values, so which experts a rank uses depends on its data shard.
Gradients are clipped by their global norm before the step.

Correctness: after training all ranks hold the same parameters (checked by
an ``all_gather`` and an ``assert``), and the loss stayed finite.

Entry points (``FUNC(rank, world_size)``, world size 2):

- ``main_correct``: buckets every parameter on every rank (an unused expert
  contributes a zero gradient), clips after ``wait()``.
- ``main_bug_unused_expert``: a rank whose batch routed no token to an expert
  skips that expert's bucket. Which rank skips depends on the data, so the
  ranks issue different numbers of all-reduces and the job hangs (or, with
  gloo, reduces mismatched buffers). Modelled on pytorch/pytorch#72843
  ("Training Hanging and DDP Bucketing": a module that runs on a subset of
  ranks made two trainers issue mismatched collectives) and the DDP
  ``find_unused_parameters`` reports (pytorch/pytorch#42183).
- ``main_bug_local_overflow`` (input ``loss_scale``): mixed precision with
  a loss scale. Each rank checks its own scaled gradients for fp16 overflow
  and skips the step when they overflow, without agreeing with the other
  ranks (``main_correct`` all-reduces the overflow flag first). For scales
  where one rank's gradients overflow and the other's do not, the ranks issue
  different collectives. Modelled on facebookresearch/fairscale#179
  (the grad scaler's inf check was not synchronised across processes: one
  rank skipped the optimizer step, the other stepped and hung).
- ``main_bug_early_clip``: the clip norm is computed from the buckets right
  after the all-reduce is issued, "to overlap it with communication", i.e.
  before ``wait()``. Whether a rank sees its local or the reduced gradients
  depends on when the transfer lands, so ranks clip by different factors and
  their replicas silently diverge. Modelled on pytorch/pytorch#53159 (fixed
  by #53160): DDP's ``local_used_map`` was written while its async all-reduce
  could still be reading it.
"""

import math
from typing import Annotated

import torch
import torch.distributed as dist

from dnsse import Range, emit

# LTL properties of the program (the campaign checks them once --spec lands).
DNSSE_SPECS = [
    # Every optimizer step comes after the all-reduce of each bucket completed.
    "G(optimizer_step -> O(bucket_reduced))",
    # A rank never reads a bucket between issuing its all-reduce and waiting on it.
    "G(bucket_issued -> (!bucket_read U bucket_reduced))",
]

WIDTH = 4
MAX_NORM = 5.0
GATE = 2.6
LEARNING_RATE = 0.01
PARAMETERS = ("embed", "expert0", "expert1", "head")
# Reverse registration order, two parameters per bucket, as DDP's reducer does.
BUCKETS = (("head", "expert1"), ("expert0", "embed"))


def shard(rank: int, step: int) -> torch.Tensor:
    """This rank's tokens for ``step``: different data on every rank."""
    base = torch.arange(WIDTH, dtype=torch.float32) + 1.0
    return base * (0.5 + 0.25 * rank) + step * (1.0 - 2.0 * rank) * 0.75


def route(tokens: torch.Tensor) -> list[int]:
    """Top-1 routing by a fixed gate: large activations go to expert 1."""
    return [1 if float(t) > GATE else 0 for t in tokens]


def init_parameters() -> dict[str, torch.Tensor]:
    return {name: torch.full((WIDTH,), 1.0 + 0.5 * i) for i, name in enumerate(PARAMETERS)}


def backward(params: dict[str, torch.Tensor], tokens: torch.Tensor) -> tuple[float, dict[str, torch.Tensor | None]]:
    """Loss and gradients of a tiny linear model; an expert with no token has no gradient."""
    hidden = tokens * params["embed"]
    experts = route(tokens)
    mixed = torch.stack([hidden[i] * params[f"expert{e}"][i] for i, e in enumerate(experts)])
    output = mixed * params["head"]
    loss = float((output**2).mean())
    grad_out = 2.0 * output / WIDTH
    grads: dict[str, torch.Tensor | None] = {"head": grad_out * mixed}
    grad_mixed = grad_out * params["head"]
    grad_hidden = torch.zeros(WIDTH)
    for expert in (0, 1):
        used = [i for i, e in enumerate(experts) if e == expert]
        if not used:
            grads[f"expert{expert}"] = None
            continue
        grad = torch.zeros(WIDTH)
        for i in used:
            grad[i] = grad_mixed[i] * hidden[i]
            grad_hidden[i] = grad_mixed[i] * params[f"expert{expert}"][i]
        grads[f"expert{expert}"] = grad
    grads["embed"] = grad_hidden * tokens
    return loss, grads


class Reducer:
    """Flattens gradients into buckets and all-reduces each one asynchronously."""

    def __init__(self, world_size: int, skip_unused: bool) -> None:
        self.world_size = world_size
        self.skip_unused = skip_unused
        self.pending: list[tuple[tuple[str, ...], torch.Tensor, object]] = []

    def bucket_ready(self, names: tuple[str, ...], grads: dict[str, torch.Tensor | None]) -> None:
        if self.skip_unused and any(grads[name] is None for name in names):
            return  # the bug of main_bug_unused_expert: this rank issues one all-reduce less
        flat = torch.cat([grads[name] if grads[name] is not None else torch.zeros(WIDTH) for name in names])
        work = dist.all_reduce(flat, async_op=True)
        emit("bucket_issued", bucket=names[0])
        self.pending.append((names, flat, work))

    def norm_now(self) -> float:
        """The gradient norm read straight from the buckets, whatever state they are in."""
        emit("bucket_read")
        return math.sqrt(sum(float(flat.pow(2).sum()) for _, flat, _ in self.pending)) / self.world_size

    def finish(self) -> dict[str, torch.Tensor]:
        reduced: dict[str, torch.Tensor] = {}
        for names, flat, work in self.pending:
            work.wait()
            emit("bucket_reduced", bucket=names[0])
            for i, name in enumerate(names):
                reduced[name] = flat[i * WIDTH : (i + 1) * WIDTH] / self.world_size
        self.pending = []
        return reduced


FP16_MAX = 65504.0
LossScale = Annotated[float, Range(1.0, 1e6)]


def overflowed(grads: dict[str, torch.Tensor | None], loss_scale: float, synchronized: bool) -> bool:
    """Whether the scaled gradients overflow fp16: on this rank, or (synchronized) on any rank."""
    local = max((g * loss_scale).abs().max().item() for g in grads.values() if g is not None) > FP16_MAX
    if not synchronized:
        return local
    flag = torch.tensor([1.0 if local else 0.0])
    dist.all_reduce(flag)
    return flag.item() > 0


def train(
    rank: int,
    world_size: int,
    steps: int,
    skip_unused: bool,
    early_clip: bool,
    loss_scale: float | None = None,
    synchronized_overflow: bool = True,
) -> None:
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    params = init_parameters()
    reducer = Reducer(world_size, skip_unused)
    losses = []
    for step in range(steps):
        loss, grads = backward(params, shard(rank, step))
        losses.append(loss)
        if loss_scale is not None and overflowed(grads, loss_scale, synchronized_overflow):
            emit("overflow_skip", step=step)
            continue
        for names in BUCKETS:
            reducer.bucket_ready(names, grads)
        early_norm = reducer.norm_now() if early_clip else None
        reduced = reducer.finish()
        norm = early_norm if early_norm is not None else math.sqrt(sum(float(g.pow(2).sum()) for g in reduced.values()))
        scale = min(1.0, MAX_NORM / (norm + 1e-6))
        emit("optimizer_step", step=step)
        for name, grad in reduced.items():
            params[name] -= LEARNING_RATE * scale * grad
    check_replicas_agree(params, world_size)
    assert all(math.isfinite(loss) for loss in losses), f"the loss diverged: {losses}"
    dist.destroy_process_group()


def check_replicas_agree(params: dict[str, torch.Tensor], world_size: int) -> None:
    flat = torch.cat([params[name] for name in PARAMETERS])
    gathered = [torch.zeros_like(flat) for _ in range(world_size)]
    dist.all_gather(gathered, flat)
    for other, replica in enumerate(gathered):
        assert torch.allclose(replica, gathered[0], atol=1e-6), (
            f"rank {other}'s parameters differ from rank 0's: the replicas diverged"
        )


def main_correct(rank: int, world_size: int, steps: int = 3, loss_scale: LossScale = 1.0) -> None:
    train(rank, world_size, steps, skip_unused=False, early_clip=False, loss_scale=loss_scale)


def main_bug_local_overflow(rank: int, world_size: int, steps: int = 3, loss_scale: LossScale = 1.0) -> None:
    train(
        rank, world_size, steps, skip_unused=False, early_clip=False, loss_scale=loss_scale,
        synchronized_overflow=False,
    )


def main_bug_unused_expert(rank: int, world_size: int, steps: int = 3) -> None:
    train(rank, world_size, steps, skip_unused=True, early_clip=False)


def main_bug_early_clip(rank: int, world_size: int, steps: int = 3) -> None:
    train(rank, world_size, steps, skip_unused=False, early_clip=True)
