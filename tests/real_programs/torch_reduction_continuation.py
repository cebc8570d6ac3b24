"""DeepSpeed ZeRO's bucketed gradient reduction, continued on the reduction stream.

DeepSpeed's stage-1/2 optimizer fills a bucket from each parameter's
post-accumulate-grad hook; a full bucket is flattened and all-reduced with
``async_op=True``, and the rest of the bucket's work (average, copy back into
the gradients) is chained on the operation's future with
``Work.get_future().then(...)``. At most ``max_in_flight`` buckets are in
flight: the hook that launches one more waits on the oldest continuation
first, inside the backward pass. After ``backward()`` every continuation is
waited before the optimizer steps.

Bug variant: ``norm_before_wait``, which logs the bucket's norm right after
launching its all-reduce, reading the buffer before the operation finished.
"""
import json
import os

import torch
import torch.distributed as dist
import torch.nn as nn


def _compare(name, rank, **values):
    out = os.environ.get("DNSSE_COMPARE_DIR")
    if out:
        with open(os.path.join(out, f"{name}-rank{rank}.json"), "w") as f:
            json.dump({k: v.tolist() for k, v in values.items()}, f)


class BucketedReducer:
    def __init__(self, params, world_size, bucket_size=2, max_in_flight=1, log_norm=False, wait_all=False):
        self.world_size = world_size
        self.bucket_size = bucket_size
        self.max_in_flight = max_in_flight
        self.log_norm = log_norm
        self.wait_all = wait_all
        self.bucket = []
        self.in_flight = []
        self.norms = []
        self.reduced = 0
        for p in params:
            p.register_post_accumulate_grad_hook(self._on_grad)

    def _on_grad(self, param):
        self.bucket.append(param)
        if len(self.bucket) == self.bucket_size:
            self.reduce_bucket()

    def reduce_bucket(self):
        if not self.bucket:
            return
        params, self.bucket = self.bucket, []
        flat = torch.cat([p.grad.reshape(-1) for p in params])
        work = dist.all_reduce(flat, async_op=True)
        if self.log_norm:
            self.norms.append(flat.norm())
        continuation = work.get_future().then(lambda fut: self._copy_back(fut.value()[0], params))
        self.in_flight.append(continuation)
        if len(self.in_flight) > self.max_in_flight:
            oldest, self.in_flight = self.in_flight[:-self.max_in_flight], self.in_flight[-self.max_in_flight:]
            if self.wait_all:
                torch.futures.wait_all(oldest)
            else:
                for continuation in oldest:
                    continuation.wait()

    def _copy_back(self, flat, params):
        flat.div_(self.world_size)
        offset = 0
        for p in params:
            n = p.grad.numel()
            p.grad.copy_(flat[offset:offset + n].view_as(p.grad))
            offset += n
        self.reduced += len(params)

    def synchronize(self):
        self.reduce_bucket()
        for continuation in self.in_flight:
            continuation.wait()
        self.in_flight = []
        reduced, self.reduced = self.reduced, 0
        return reduced


def _train(rank, world_size, log_norm, wait_all=False):
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
    reducer = BucketedReducer(model.parameters(), world_size, log_norm=log_norm, wait_all=wait_all)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(2):
        g = torch.Generator().manual_seed(rank * 10 + step)
        model(torch.randn(3, 4, generator=g)).sum().backward()
        assert reducer.synchronize() == 6, "not every gradient was reduced"
        opt.step()
        opt.zero_grad()
    weights = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    gathered = [torch.zeros_like(weights) for _ in range(world_size)]
    dist.all_gather(gathered, weights)
    assert all(torch.equal(gathered[0], w) for w in gathered), "the ranks' weights differ"
    _compare("reduction_continuation", rank, weights=weights)


def train(rank, world_size):
    _train(rank, world_size, log_norm=False)


def train_wait_all(rank, world_size):
    _train(rank, world_size, log_norm=False, wait_all=True)


def norm_before_wait(rank, world_size):
    _train(rank, world_size, log_norm=True)
