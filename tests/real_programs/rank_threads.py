"""A rank's own threads calling torch.distributed: an async checkpoint writer.

A thread a rank starts runs in the rank's process, so it may call
torch.distributed as that rank; real torch allows it (gloo serves calls
from any thread of the process). A common use is a checkpoint writer that
agrees with the other ranks on a side group while training goes on.
"""

import threading

import torch
import torch.distributed as dist


def _snapshot(model):
    return {name: tensor.detach().clone() for name, tensor in model.state_dict().items()}


def checkpoint_on_side_group(rank, world_size, steps: int = 2):
    """The writer agrees on a side group of its own: correct, whatever the interleaving."""
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    side = dist.new_group(list(range(world_size)), backend="gloo")
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    writer = None
    for step in range(steps):
        if writer is not None:
            writer.join()  # one checkpoint in flight at a time: the side group serves one writer
        snapshot = _snapshot(model)

        def write(step=step, snapshot=snapshot):
            saved = torch.tensor([float(step)])
            dist.all_reduce(saved, group=side)  # every rank has its snapshot of this step
            assert saved.item() == step * world_size
            if rank == 0:
                torch.save(snapshot, f"ckpt-{step}.pt")

        writer = threading.Thread(target=write, name=f"ckpt-writer-{step}")
        writer.start()
        _train_step(model)
    writer.join()
    return [p.detach().clone() for p in model.parameters()]


def _train_step(model):
    for parameter in model.parameters():
        grad = torch.ones_like(parameter)
        dist.all_reduce(grad)
        with torch.no_grad():
            parameter -= 0.1 * grad


def checkpoint_on_default_group(rank, world_size, steps: int = 2):
    """The same writer on the default group, which training uses at the same time.

    Two threads of a rank issue collectives on one group in an order that
    depends on timing, so the ranks may pair the writer's one-element
    all_reduce with a training all_reduce of a weight: a collective mismatch
    (real gloo: a size mismatch error or a hang).
    """
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    writers = []
    for step in range(steps):
        def write(step=step):
            saved = torch.tensor([float(step)])
            dist.all_reduce(saved)
        writer = threading.Thread(target=write)
        writer.start()
        writers.append(writer)
        _train_step(model)
    for writer in writers:
        writer.join()


def gradients_in_a_thread_started_under_no_grad(rank, world_size):
    """A new thread starts with torch's default grad mode (enabled), whatever its creator's is."""
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    side = dist.new_group(list(range(world_size)))
    weight = torch.ones(3, requires_grad=True)
    grads = []

    def worker():
        (weight * float(rank + 1)).sum().backward()
        grad = weight.grad.clone()
        dist.all_reduce(grad, group=side)
        grads.append(grad)

    with torch.no_grad():
        thread = threading.Thread(target=worker)
        thread.start()
    thread.join()
    assert grads[0].tolist() == [float(sum(range(1, world_size + 1)))] * 3
    return grads[0]
