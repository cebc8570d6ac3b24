"""Pipeline-parallel training with the 1F1B schedule and microbatch send/recv.

Each rank is one pipeline stage (world size 3: three stages). A training step
splits the batch into microbatches and runs the one-forward-one-backward
schedule of Megatron-LM and ``torch.distributed.pipelining.Schedule1F1B``:
stage ``s`` runs ``min(stages - s - 1, microbatches)`` warm-up forwards, then
alternates one forward and one backward, then drains the remaining
backwards. Activations travel down the pipeline and gradients up it; in the
steady state a stage posts its send and its receive together (``isend`` and
``irecv``, then waits on both), as Megatron does to avoid the send/send
deadlock.

Correctness: after each step every stage's weight gradient equals the one a
sequential (non-pipelined) run of the same microbatches computes (``assert``),
and the step finishes (no deadlock).

Entry points (``FUNC(rank, world_size)``, world size 3); a run trains one
step of ``microbatches`` and then the epoch's short last batch of
``last_microbatches``:

- ``main_correct``.
- ``main_bug_warmup``: the warm-up count is ``stages - s - 1`` without the
  ``min(..., microbatches)``, so a batch with fewer microbatches than warm-up
  slots makes the first stage send an activation nobody receives: the
  pipeline hangs for some microbatch counts only. Modelled on
  pytorch/torchtitan#775 ("PP hangs when pipeline_parallel_microbatches <
  pipeline_parallel_degree"; guarded in pytorch/pytorch#144702).
- ``main_bug_any_source``: the middle stage receives its gradient with an
  any-source ``irecv`` (``src=None``) and the same tag as activations. When the
  previous stage's next activation is already waiting, the receive matches it
  instead of the gradient and the stage back-propagates garbage (or the
  pipeline hangs on the message it took). Modelled on
  pmodels/mpich#3197 and openpmix/openpmix#3854 (a receive matched another
  peer's message posted on the same tag).
- ``main_bug_ragged_tail`` (inputs ``seq_len``, ``chunk``): the sequence is
  cut into microbatches of ``chunk`` tokens; for long sequences whose last
  chunk holds a single token, the last stage folds that token into the
  previous chunk, so it runs one microbatch less than the others and the
  pipeline hangs. Modelled on pytorch/pytorch#126600 (stages chunked an
  uneven batch into microbatches differently, and their sizes mismatched).
"""

from typing import Annotated

import torch
import torch.distributed as dist

from dnsse import Range, emit

DNSSE_SPECS = [
    # Every microbatch that enters the pipeline leaves it through its backward.
    "G(forward -> F(backward))",
    # A stage never runs a backward for a microbatch it has not forwarded.
    "G(backward -> O(forward))",
]

WIDTH = 4


def microbatch(index: int) -> torch.Tensor:
    return torch.arange(WIDTH, dtype=torch.float32) * 0.1 + index + 1.0


def stage_weight(stage: int) -> torch.Tensor:
    return torch.full((WIDTH,), 0.5 + 0.25 * stage)


class Stage:
    """One pipeline stage: a scaled affine layer with its saved inputs and weight gradient."""

    def __init__(self, rank: int, stages: int, any_source_grad: bool) -> None:
        self.rank = rank
        self.stages = stages
        self.first = rank == 0
        self.last = rank == stages - 1
        self.weight = stage_weight(rank)
        self.bias = 0.1 * rank
        self.saved: dict[int, torch.Tensor] = {}
        self.outputs: dict[int, torch.Tensor] = {}
        self.weight_grad = torch.zeros(WIDTH)
        self.any_source_grad = any_source_grad

    def forward(self, index: int, inputs: torch.Tensor) -> torch.Tensor:
        emit("forward", stage=self.rank, mb=index)
        self.saved[index] = inputs
        output = inputs * self.weight + self.bias
        self.outputs[index] = output
        return output

    def backward(self, index: int, grad_output: torch.Tensor) -> torch.Tensor:
        emit("backward", stage=self.rank, mb=index)
        inputs = self.saved.pop(index)
        self.weight_grad += grad_output * inputs
        return grad_output * self.weight

    # ------------------------------------------------------------ communication
    def recv_forward(self, index: int) -> torch.Tensor:
        if self.first:
            return microbatch(index)
        buffer = torch.zeros(WIDTH)
        dist.recv(buffer, src=self.rank - 1)
        return buffer

    def send_forward(self, output: torch.Tensor) -> None:
        if not self.last:
            dist.send(output, dst=self.rank + 1)

    def recv_backward(self, index: int) -> torch.Tensor:
        if self.last:
            return self.outputs.pop(index)  # d(sum(out^2)/2)/d(out)
        buffer = torch.zeros(WIDTH)
        dist.recv(buffer, src=self.grad_source())
        return buffer

    def send_backward(self, grad: torch.Tensor) -> None:
        if not self.first:
            dist.send(grad, dst=self.rank - 1)

    def grad_source(self) -> int | None:
        return None if self.any_source_grad else self.rank + 1

    def send_forward_recv_backward(self, index: int, output: torch.Tensor) -> torch.Tensor:
        if self.last:
            return self.outputs.pop(index)
        grad = torch.zeros(WIDTH)
        for work in (dist.isend(output, self.rank + 1), dist.irecv(grad, self.grad_source())):
            work.wait()
        return grad

    def send_backward_recv_forward(self, index: int, grad: torch.Tensor) -> torch.Tensor:
        if self.first:
            return microbatch(index)
        inputs = torch.zeros(WIDTH)
        for work in (dist.isend(grad, self.rank - 1), dist.irecv(inputs, self.rank - 1)):
            work.wait()
        return inputs


def one_f_one_b(stage: Stage, microbatches: int, clamp_warmup: bool) -> None:
    """One training step of ``microbatches`` under the 1F1B schedule."""
    warmup = stage.stages - stage.rank - 1
    if clamp_warmup:
        warmup = min(warmup, microbatches)
    for index in range(warmup):
        stage.send_forward(stage.forward(index, stage.recv_forward(index)))
    steady = microbatches - warmup
    inputs = stage.recv_forward(warmup) if steady > 0 else None
    for k in range(steady):
        forward_index = warmup + k
        grad = stage.send_forward_recv_backward(forward_index, stage.forward(forward_index, inputs))
        grad_input = stage.backward(k, grad)
        if k == steady - 1:
            stage.send_backward(grad_input)
        else:
            inputs = stage.send_backward_recv_forward(forward_index + 1, grad_input)
    for index in range(max(steady, 0), microbatches):
        stage.send_backward(stage.backward(index, stage.recv_backward(index)))


def reference_weight_grad(rank: int, stages: int, microbatches: int) -> torch.Tensor:
    """The stage's weight gradient from a plain sequential run of the same microbatches."""
    total = torch.zeros(WIDTH)
    for index in range(microbatches):
        inputs = [microbatch(index)]
        for s in range(stages):
            inputs.append(inputs[-1] * stage_weight(s) + 0.1 * s)
        grad = inputs[-1]
        for s in reversed(range(stages)):
            if s == rank:
                total += grad * inputs[s]
            grad = grad * stage_weight(s)
    return total


def train(rank: int, world_size: int, batches: list[int], clamp_warmup: bool, any_source_grad: bool) -> None:
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    for microbatches in batches:
        stage = Stage(rank, world_size, any_source_grad)
        one_f_one_b(stage, microbatches, clamp_warmup)
        expected = reference_weight_grad(rank, world_size, microbatches)
        assert torch.allclose(stage.weight_grad, expected), (
            f"stage {rank}: weight gradient {stage.weight_grad.tolist()} differs from "
            f"the sequential run's {expected.tolist()} ({microbatches} microbatches)"
        )
        assert not stage.saved, f"stage {rank} never ran the backward of microbatches {sorted(stage.saved)}"
        dist.barrier()
    dist.destroy_process_group()


SeqLen = Annotated[int, Range(1, 256)]
Chunk = Annotated[int, Range(8, 64)]


def chunks_of(seq_len: int, chunk: int, last_stage: bool, fold_tail: bool) -> int:
    """Microbatches of a sequence cut in chunks; the buggy last stage folds a one-token tail into the previous chunk."""
    count = -(-seq_len // chunk)
    if fold_tail and last_stage and seq_len > 240 and seq_len % chunk == 1:
        count -= 1
    return count


def main_correct(
    rank: int, world_size: int, microbatches: int = 4, last_microbatches: int = 1, seq_len: SeqLen = 64, chunk: Chunk = 16
) -> None:
    tail = chunks_of(seq_len, chunk, rank == world_size - 1, fold_tail=False)
    train(rank, world_size, [microbatches, last_microbatches, tail], clamp_warmup=True, any_source_grad=False)


def main_bug_ragged_tail(rank: int, world_size: int, seq_len: SeqLen = 64, chunk: Chunk = 16) -> None:
    tail = chunks_of(seq_len, chunk, rank == world_size - 1, fold_tail=True)
    train(rank, world_size, [tail], clamp_warmup=True, any_source_grad=False)


def main_bug_warmup(rank: int, world_size: int, microbatches: int = 4, last_microbatches: int = 1) -> None:
    train(rank, world_size, [microbatches, last_microbatches], clamp_warmup=False, any_source_grad=False)


def main_bug_any_source(rank: int, world_size: int, microbatches: int = 4, last_microbatches: int = 1) -> None:
    train(rank, world_size, [microbatches, last_microbatches], clamp_warmup=True, any_source_grad=True)
