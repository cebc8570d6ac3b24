"""torch inside asyncio tasks and threads that a rank starts.

On a real loop every task runs in the loop's thread, so a task sees that
thread's grad mode and autocast state; a new thread starts with torch's
defaults (grad enabled, no autocast). ``torch.distributed`` is the rank's
process group in both.
"""

import asyncio
import threading

import torch
import torch.distributed as dist


def collective_in_task(rank, world_size):
    async def reduce():
        value = torch.full((2,), float(rank + 1))
        dist.all_reduce(value)
        return value

    assert asyncio.run(reduce()).tolist() == [3.0, 3.0]


def collectives_from_tasks_in_rank_order(rank, world_size):
    """Two tasks whose collectives follow different delays on each rank: the ranks issue them in different orders."""

    async def reduce(value, delay):
        await asyncio.sleep(delay)
        dist.all_reduce(value)

    async def main():
        await asyncio.gather(reduce(torch.ones(1), 0.01 * (rank + 1)), reduce(torch.ones(3), 0.015))

    asyncio.run(main())


def torch_state_in_tasks_and_threads(rank, world_size):
    weight = torch.ones(2, requires_grad=True)

    async def forward():
        await asyncio.sleep(0)
        return (weight * 2).sum(), torch.is_autocast_enabled("cpu"), torch.ones(1).cuda().device.type

    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        loss, autocast, device = asyncio.run(forward())
    assert not loss.requires_grad, "the task runs in the loop's thread, under no_grad"
    assert autocast
    assert device == "cpu"
    seen = []
    with torch.no_grad():
        thread = threading.Thread(target=lambda: seen.append(torch.is_grad_enabled()))
        thread.start()
        thread.join()
    assert seen == [True], "a new thread starts with grad enabled"
    total = torch.ones(1)
    dist.all_reduce(total)
    assert total.item() == world_size
