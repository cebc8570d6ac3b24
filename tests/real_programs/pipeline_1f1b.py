"""A Megatron-LM style 1F1B pipeline schedule over two stages.

The schedule is Megatron's ``forward_backward_pipelining_without_interleaving``
(warm-up forwards, steady one-forward-one-backward, cool-down backwards), and
the communication helpers follow ``megatron/core/pipeline_parallel/p2p_communication.py``:

- ``*_batched``: ``_communicate`` posts every send and receive of a step as
  one ``dist.batch_isend_irecv`` and waits for all of them;
- ``*_isend_irecv``: the ``_p2p_ops`` path, single ``isend``/``irecv`` calls,
  even ranks sending first and odd ranks receiving first, so that under NCCL
  each unbatched send meets its receive on the pair's stream; correct under
  gloo and NCCL (``backend`` is an input).

Bug variants: ``train_batched_waits_on_sends_only`` waits for the send
requests alone and uses the received activation (a read of an unfinished
receive buffer); ``train_blocking_send_first`` uses blocking ``send`` before
``recv`` on both stages in the steady phase, the pipeline deadlock where both
stages wait for the other to receive (under NCCL, the host goes on and both
streams hang); ``train_isend_irecv_sends_first`` posts
single ``isend``/``irecv`` calls with every rank sending first, which gloo
runs (its sends progress on their own threads) but which hangs both NCCL
streams, each in a send whose receive is queued behind the peer's send.
"""

import json
import os
from typing import Literal

import torch
import torch.distributed as dist
import torch.nn as nn

HIDDEN = 6
MICROBATCHES = 4


class P2P:
    """Megatron's send/recv helpers, for one pipeline rank."""

    def __init__(self, rank, world_size, style):
        self.rank, self.world_size, self.style = rank, world_size, style
        self.prev = rank - 1 if rank > 0 else None
        self.next = rank + 1 if rank < world_size - 1 else None

    def communicate(self, tensor_send_next, tensor_send_prev, recv_prev, recv_next):
        tensor_recv_prev = torch.empty(2, HIDDEN, requires_grad=True) if recv_prev else None
        tensor_recv_next = torch.empty(2, HIDDEN, requires_grad=True) if recv_next else None
        ops = []
        if tensor_send_prev is not None:
            ops.append((dist.isend, tensor_send_prev, self.prev))
        if tensor_recv_prev is not None:
            ops.append((dist.irecv, tensor_recv_prev, self.prev))
        if tensor_send_next is not None:
            ops.append((dist.isend, tensor_send_next, self.next))
        if tensor_recv_next is not None:
            ops.append((dist.irecv, tensor_recv_next, self.next))
        if self.style == "batched":
            reqs = dist.batch_isend_irecv([dist.P2POp(op, t, peer) for op, t, peer in ops]) if ops else []
            for req in reqs:
                req.wait()
        elif self.style == "batched_sends_only":
            reqs = dist.batch_isend_irecv([dist.P2POp(op, t, peer) for op, t, peer in ops]) if ops else []
            for req, (op, _, _) in zip(reqs, ops):
                if op is dist.isend:
                    req.wait()  # BUG: the receives are never waited for
        elif self.style in ("isend_irecv", "isend_irecv_sends_first"):
            # Even ranks send first, odd ranks receive first, as Megatron orders them.
            # The bug variant lets odd ranks send first too.
            sends_first = self.rank % 2 == 0 or self.style == "isend_irecv_sends_first"
            ordered = ops if sends_first else sorted(ops, key=lambda o: o[0] is dist.isend)
            reqs = [op(t, peer) for op, t, peer in ordered]
            for req in reqs:
                req.wait()
        else:  # "blocking": each stage sends before it receives
            for op, t, peer in sorted(ops, key=lambda o: o[0] is not dist.isend):
                (dist.send if op is dist.isend else dist.recv)(t, peer)
        return tensor_recv_prev, tensor_recv_next

    def recv_forward(self):
        return None if self.prev is None else self.communicate(None, None, True, False)[0]

    def send_forward(self, output):
        if self.next is not None:
            self.communicate(output.detach(), None, False, False)

    def recv_backward(self):
        return None if self.next is None else self.communicate(None, None, False, True)[1]

    def send_backward(self, input_grad):
        if self.prev is not None:
            self.communicate(None, input_grad, False, False)

    def send_forward_recv_backward(self, output):
        if self.next is None:
            return None
        return self.communicate(output.detach(), None, False, True)[1]

    def send_backward_recv_forward(self, input_grad):
        if self.prev is None:
            return None
        return self.communicate(None, input_grad, True, False)[0]


def forward_step(stage, rank, input_tensor, microbatch):
    if input_tensor is None:
        torch.manual_seed(microbatch)
        input_tensor = torch.randn(2, HIDDEN)
    output = stage(input_tensor)
    if rank == 1:
        output = output.pow(2).mean()  # the loss, on the last stage
    return output


def backward_step(input_tensor, output, output_grad):
    if input_tensor is not None:
        input_tensor.retain_grad()
    torch.autograd.backward(output, grad_tensors=output_grad)
    return None if input_tensor is None else input_tensor.grad


def report(rank, stage):
    """For the real-gloo comparison test: where it asks, write this stage's gradients."""
    directory = os.environ.get("DNSSE_COMPARE_DIR")
    if directory:
        values = {name: p.grad.tolist() for name, p in stage.named_parameters()}
        with open(os.path.join(directory, f"pipeline-rank{rank}.json"), "w") as file:
            json.dump(values, file)


def one_f_one_b(rank, world_size, style, backend="nccl"):
    dist.init_process_group(backend, rank=rank, world_size=world_size)
    torch.manual_seed(1234 + rank)
    stage = nn.Sequential(nn.Linear(HIDDEN, HIDDEN), nn.Tanh())
    p2p = P2P(rank, world_size, style)
    num_warmup = min(world_size - rank - 1, MICROBATCHES)
    num_remaining = MICROBATCHES - num_warmup
    inputs, outputs = [], []
    microbatch = 0
    for _ in range(num_warmup):
        input_tensor = p2p.recv_forward()
        output = forward_step(stage, rank, input_tensor, microbatch)
        microbatch += 1
        p2p.send_forward(output)
        inputs.append(input_tensor)
        outputs.append(output)
    input_tensor = p2p.recv_forward() if num_remaining > 0 else None
    for i in range(num_remaining):
        last = i == num_remaining - 1
        output = forward_step(stage, rank, input_tensor, microbatch)
        microbatch += 1
        output_grad = p2p.send_forward_recv_backward(output)
        inputs.append(input_tensor)
        outputs.append(output)
        input_tensor, output = inputs.pop(0), outputs.pop(0)
        input_grad = backward_step(input_tensor, output, output_grad)
        if last:
            input_tensor = None
            p2p.send_backward(input_grad)
        else:
            input_tensor = p2p.send_backward_recv_forward(input_grad)
    for _ in range(num_warmup):
        input_tensor, output = inputs.pop(0), outputs.pop(0)
        output_grad = p2p.recv_backward()
        input_grad = backward_step(input_tensor, output, output_grad)
        p2p.send_backward(input_grad)
    report(rank, stage)
    dist.destroy_process_group()


def train_batched(rank, world_size):
    one_f_one_b(rank, world_size, "batched")


def train_isend_irecv(rank, world_size, backend: Literal["nccl", "gloo"] = "nccl"):
    one_f_one_b(rank, world_size, "isend_irecv", backend)


def train_isend_irecv_sends_first(rank, world_size, backend: Literal["nccl", "gloo"] = "nccl"):
    one_f_one_b(rank, world_size, "isend_irecv_sends_first", backend)


def train_batched_waits_on_sends_only(rank, world_size):
    one_f_one_b(rank, world_size, "batched_sends_only")


def train_blocking_send_first(rank, world_size):
    one_f_one_b(rank, world_size, "blocking")
