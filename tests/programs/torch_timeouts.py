"""``Work.wait(timeout)`` while the peer is merely slow: torch raises when it expires."""

from datetime import timedelta

import torch
import torch.distributed as dist


def slow_sender(rank, world_size):
    t = torch.zeros(1)
    if rank == 0:
        work = dist.irecv(t, src=1)
        try:
            work.wait(timeout=timedelta(seconds=5))
        except RuntimeError as error:
            raise AssertionError(f"the receive timed out: {error}") from None
        assert t.item() == 7.0
    else:
        t.fill_(7.0)
        dist.send(t, dst=0)
