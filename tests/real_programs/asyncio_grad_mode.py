"""A rank that evaluates and trains in asyncio tasks of one loop.

torch keeps grad mode per OS thread, and every task of a loop runs in the
loop's thread: a task that suspends inside ``with torch.no_grad():`` leaves
grad disabled for whichever task runs next. Here the evaluation task
awaits inside ``no_grad`` (handing a batch on), so the training task's
forward may record nothing and its ``backward()`` raise ("element 0 of
tensors does not require grad"). Plain asyncio runs the tasks in that very
order. The correct version leaves ``no_grad`` before it awaits.
"""

import asyncio

import torch
import torch.distributed as dist


async def evaluate(model, batch, results, await_inside_no_grad):
    with torch.no_grad():
        results.append(model(batch).sum().item())
        if await_inside_no_grad:
            await asyncio.sleep(0)
    await asyncio.sleep(0)


async def train_step(model, batch):
    loss = model(batch).pow(2).sum()
    loss.backward()


async def serve(model, await_inside_no_grad):
    batch = torch.ones(2, 4)
    results = []
    await asyncio.gather(evaluate(model, batch, results, await_inside_no_grad), train_step(model, batch))
    return results


def _train(rank, world_size, await_inside_no_grad):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    asyncio.run(serve(model, await_inside_no_grad))
    for parameter in model.parameters():
        dist.all_reduce(parameter.grad)
    return [parameter.grad for parameter in model.parameters()]


def evaluate_then_train(rank, world_size):
    """Correct: no task suspends with grad disabled."""
    return _train(rank, world_size, await_inside_no_grad=False)


def no_grad_across_await(rank, world_size):
    """The bug: the evaluation task awaits inside no_grad."""
    return _train(rank, world_size, await_inside_no_grad=True)
