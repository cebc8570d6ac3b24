"""torch.distributed.pipelining's manual split, as its docs write it: each rank
builds its stage's module, wraps it in a ``PipelineStage``, and runs
``ScheduleGPipe`` or ``Schedule1F1B``; the first stage feeds the input, the
last gets the target and the losses. ``interleaved``: two stages per rank
under ``ScheduleInterleaved1F1B``.

Bug variant: ``gpipe_microbatch_mismatch``, the last stage built with half
the first stage's microbatches.
"""
import json
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe, ScheduleInterleaved1F1B

HIDDEN = 8
BATCH = 8
MICRO = 4


def save(name, rank, **values):
    out = os.environ.get("DNSSE_COMPARE_DIR")
    if out:
        with open(os.path.join(out, f"{name}-rank{rank}.json"), "w") as f:
            json.dump({k: v.tolist() for k, v in values.items()}, f)


class Stage(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, x):
        return torch.relu(self.lin(x))


def _run(rank, world_size, schedule_cls, name):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    stages = [Stage() for _ in range(world_size)]
    module = stages[rank]
    stage = PipelineStage(module, rank, world_size, torch.device("cpu"))
    schedule = schedule_cls(stage, n_microbatches=MICRO, loss_fn=lambda out, target: ((out - target) ** 2).mean())
    torch.manual_seed(1)
    x = torch.randn(BATCH, HIDDEN)
    target = torch.randn(BATCH, HIDDEN)
    losses = []
    if rank == 0:
        schedule.step(x)
    elif rank == world_size - 1:
        out = schedule.step(target=target, losses=losses)
    else:
        schedule.step()
    values = {"weight_grad": module.lin.weight.grad, "bias_grad": module.lin.bias.grad}
    if rank == world_size - 1:
        values["out"] = out.detach()
        values["loss"] = torch.stack(losses).detach()
    save(name, rank, **values)
    dist.destroy_process_group()


def gpipe(rank, world_size):
    _run(rank, world_size, ScheduleGPipe, "gpipe")


def one_f_one_b(rank, world_size):
    _run(rank, world_size, Schedule1F1B, "1f1b")


def interleaved(rank, world_size):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    n_stages = 2 * world_size
    modules = [Stage() for _ in range(n_stages)]
    mine = [rank, rank + world_size]
    stages = [PipelineStage(modules[i], i, n_stages, torch.device("cpu")) for i in mine]
    schedule = ScheduleInterleaved1F1B(stages, n_microbatches=MICRO, loss_fn=lambda out, target: ((out - target) ** 2).mean())
    torch.manual_seed(1)
    x = torch.randn(BATCH, HIDDEN)
    target = torch.randn(BATCH, HIDDEN)
    if rank == 0:
        schedule.step(x)
    else:
        schedule.step(target=target, losses=[])
    save("interleaved", rank, **{f"grad{i}": modules[i].lin.weight.grad for i in mine})


def gpipe_microbatch_mismatch(rank, world_size):
    """The last stage is built with fewer microbatches than the first."""
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    stages = [Stage() for _ in range(world_size)]
    stage = PipelineStage(stages[rank], rank, world_size, torch.device("cpu"))
    n = MICRO if rank == 0 else MICRO // 2
    schedule = ScheduleGPipe(stage, n_microbatches=n, loss_fn=lambda out, target: ((out - target) ** 2).mean())
    x = torch.randn(BATCH, HIDDEN)
    target = torch.randn(BATCH, HIDDEN)
    if rank == 0:
        schedule.step(x)
    else:
        schedule.step(target=target, losses=[])
