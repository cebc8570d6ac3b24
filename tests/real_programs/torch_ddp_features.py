"""DistributedDataParallel beyond the basic tutorial, as its docs and tutorials use it.

Correct: gradient accumulation under ``no_sync()``, ``find_unused_parameters``
with ranks using different layers, ``static_graph``, communication hooks
(``allreduce_hook``, ``fp16_compress_hook``, PowerSGD, and a hook waiting on its
own all-reduce's future as PowerSGD's callbacks do), the ``Join`` context
manager with uneven inputs (the "uneven inputs" tutorial), and
``ZeroRedundancyOptimizer`` (its tutorial), alone and joined.

``sync_batch_norm_cuda``: SyncBatchNorm in a CUDA program, which dnsse cannot
run on a machine without CUDA (refused, exit 2).

Bug variants: ``no_sync()`` on one rank only (the other all-reduces alone),
and ``consolidate_state_dict``, a collective, called on the saving rank only.
"""
import json
import os

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks, powerSGD_hook
from torch.distributed.algorithms.join import Join
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel as DDP


def save(name, rank, **values):
    out = os.environ.get("DNSSE_COMPARE_DIR")
    if out:
        with open(os.path.join(out, f"{name}-rank{rank}.json"), "w") as f:
            json.dump({k: v.tolist() for k, v in values.items()}, f)


class Net(nn.Module):
    def __init__(self, extra=False):
        super().__init__()
        self.a = nn.Linear(6, 6)
        self.b = nn.Linear(6, 3)
        if extra:
            self.unused = nn.Linear(6, 3)

    def forward(self, x, use_unused=False):
        h = torch.relu(self.a(x))
        return self.unused(h) if use_unused else self.b(h)


def _params(model):
    return {n.replace(".", "_"): p.detach().clone() for n, p in model.named_parameters()}


def _data(rank, step):
    g = torch.Generator().manual_seed(100 * rank + step)
    return torch.randn(4, 6, generator=g), torch.randn(4, 3, generator=g)


def no_sync_accumulation(rank, world_size):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(Net())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(2):
        with model.no_sync():
            x, y = _data(rank, 10 * step)
            ((model(x) - y) ** 2).mean().backward()
        x, y = _data(rank, 10 * step + 1)
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
        opt.zero_grad()
    save("nosync", rank, **_params(model.module))


def unused_parameters(rank, world_size):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(Net(extra=True), find_unused_parameters=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        x, y = _data(rank, step)
        ((model(x, use_unused=(step + rank) % 2 == 0) - y) ** 2).mean().backward()
        opt.step()
        opt.zero_grad()
    save("unused", rank, **_params(model.module))


def static_graph(rank, world_size):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(Net(), static_graph=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        x, y = _data(rank, step)
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
        opt.zero_grad()
    save("static", rank, **_params(model.module))


def _hooked(rank, world_size, name, register):
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(Net())
    register(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        x, y = _data(rank, step)
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
        opt.zero_grad()
    save(name, rank, **_params(model.module))


def hook_allreduce(rank, world_size):
    _hooked(rank, world_size, "hook_allreduce", lambda m: m.register_comm_hook(None, default_hooks.allreduce_hook))


def hook_fp16(rank, world_size):
    _hooked(rank, world_size, "hook_fp16", lambda m: m.register_comm_hook(None, default_hooks.fp16_compress_hook))


def hook_powersgd(rank, world_size):
    def register(m):
        state = powerSGD_hook.PowerSGDState(process_group=None, matrix_approximation_rank=1, start_powerSGD_iter=2, min_compression_rate=0.5)
        m.register_comm_hook(state, powerSGD_hook.powerSGD_hook)
    _hooked(rank, world_size, "hook_powersgd", register)


def join_uneven(rank, world_size):
    """The 'uneven inputs' tutorial: rank r has 3 + r batches."""
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(nn.Linear(1, 1, bias=False))
    inputs = [torch.tensor([1.0]).float() for _ in range(3 + rank)]
    num_inputs = 0
    with Join([model]):
        for inp in inputs:
            num_inputs += 1
            loss = model(inp).sum()
            loss.backward()
    save("join", rank, weight_grad=model.module.weight.grad, n=torch.tensor([num_inputs]))


def zero_optimizer(rank, world_size):
    """The ZeroRedundancyOptimizer tutorial."""
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(nn.Sequential(*[nn.Linear(8, 8) for _ in range(4)]))
    opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.Adam, lr=0.01)
    for step in range(2):
        g = torch.Generator().manual_seed(rank * 10 + step)
        model(torch.randn(6, 8, generator=g)).sum().backward()
        opt.step()
        opt.zero_grad()
    opt.consolidate_state_dict(to=0)
    if rank == 0:
        sd = opt.state_dict()
        assert len(sd["state"]) == 8
    save("zero", rank, **_params(model.module))


def zero_join(rank, world_size):
    """ZeRO and DDP joined together with uneven inputs."""
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(nn.Linear(4, 4))
    opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.SGD, lr=0.1)
    with Join([model, opt]):
        for step in range(2 + rank):
            g = torch.Generator().manual_seed(rank * 10 + step)
            model(torch.randn(3, 4, generator=g)).sum().backward()
            opt.step()
            opt.zero_grad()
    save("zerojoin", rank, **_params(model.module))


def hook_waits_inside(rank, world_size):
    """A communication hook that waits on its own all-reduce's future inside the hook."""
    def hook(state, bucket):
        tensor = bucket.buffer().div_(world_size)
        reduced = dist.all_reduce(tensor, async_op=True).get_future().wait()[0]
        fut = torch.futures.Future()
        fut.set_result(reduced)
        return fut
    _hooked(rank, world_size, "hook_waits", lambda m: m.register_comm_hook(None, hook))


def no_sync_on_one_rank(rank, world_size):
    """Accumulation where only rank 0 skips the all-reduce of the first micro-step."""
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(Net())
    x, y = _data(rank, 0)
    if rank == 0:
        with model.no_sync():
            ((model(x) - y) ** 2).mean().backward()
    else:
        ((model(x) - y) ** 2).mean().backward()
    x, y = _data(rank, 1)
    ((model(x) - y) ** 2).mean().backward()


def zero_consolidate_on_rank0_only(rank, world_size):
    """consolidate_state_dict is a collective; calling it on the saving rank only hangs."""
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = DDP(nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 8)))
    opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.Adam, lr=0.01)
    model(torch.randn(6, 8)).sum().backward()
    opt.step()
    if rank == 0:
        opt.consolidate_state_dict(to=0)
        torch.save(opt.state_dict(), "opt.pt")


def sync_batch_norm_cuda(rank, world_size):
    dist.init_process_group("nccl", rank=rank, world_size=world_size)
    torch.cuda.set_device(rank)
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 1))
    model = DDP(nn.SyncBatchNorm.convert_sync_batchnorm(model).cuda(), device_ids=[rank])
    model(torch.randn(5, 4).cuda()).sum().backward()
