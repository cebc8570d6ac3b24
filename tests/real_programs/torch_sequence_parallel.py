"""Megatron-LM's sequence-parallel linear layer, whose backward all-gathers its input asynchronously.

``LinearWithGradAccumulationAndAsyncCommunication`` keeps each rank's slice of
the sequence; its forward all-gathers the whole sequence and multiplies; its
backward starts the same all-gather again with ``async_op=True``, computes
the input's gradient meanwhile, calls ``handle.wait()``, and only then
computes the weight's gradient from the gathered input.

Bug variant: ``wgrad_before_wait``, which computes the weight's gradient
from the gather's buffer before ``handle.wait()``.
"""
import json
import os

import torch
import torch.distributed as dist


def _compare(name, rank, **values):
    out = os.environ.get("DNSSE_COMPARE_DIR")
    if out:
        with open(os.path.join(out, f"{name}-rank{rank}.json"), "w") as f:
            json.dump({k: v.tolist() for k, v in values.items()}, f)


def _gather_along_first_dim(input_):
    world_size = dist.get_world_size()
    dim_size = list(input_.size())
    dim_size[0] = dim_size[0] * world_size
    output = torch.empty(dim_size, dtype=input_.dtype, device=input_.device)
    return output, dist.all_gather_into_tensor(output, input_.contiguous(), async_op=True)


class LinearWithGradAccumulationAndAsyncCommunication(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input, weight, wait_before_wgrad):
        ctx.save_for_backward(input, weight)
        ctx.wait_before_wgrad = wait_before_wgrad
        total_input, handle = _gather_along_first_dim(input)
        handle.wait()
        return torch.matmul(total_input, weight.t())

    @staticmethod
    def backward(ctx, grad_output):
        input, weight = ctx.saved_tensors
        all_gather_buffer, handle = _gather_along_first_dim(input)
        # The input's gradient overlaps the all-gather.
        grad_input_full = grad_output.matmul(weight)
        if ctx.wait_before_wgrad:
            handle.wait()
        grad_weight = grad_output.t().matmul(all_gather_buffer)
        if not ctx.wait_before_wgrad:
            handle.wait()
        # Reduce-scatter the input's gradient back to the sequence slices.
        grad_input = torch.empty_like(input)
        dist.reduce_scatter_tensor(grad_input, grad_input_full.contiguous())
        return grad_input, grad_weight, None


def _run(rank, world_size, wait_before_wgrad):
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    weight = torch.nn.Parameter(torch.randn(3, 4))
    g = torch.Generator().manual_seed(rank)
    x = torch.randn(2, 4, generator=g, requires_grad=True)
    out = LinearWithGradAccumulationAndAsyncCommunication.apply(x, weight, wait_before_wgrad)
    out.square().sum().backward()
    dist.all_reduce(weight.grad)
    _compare("sequence_parallel", rank, weight_grad=weight.grad, input_grad=x.grad)


def linear_sp(rank, world_size):
    _run(rank, world_size, True)


def wgrad_before_wait(rank, world_size):
    _run(rank, world_size, False)
