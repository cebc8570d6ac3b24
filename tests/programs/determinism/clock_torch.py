"""A torch program that branches on the clock: ranks read virtual time, as threads do."""

import time

import torch
import torch.distributed as dist

HOUR = 3600.0


def main(rank: int, world_size: int) -> None:
    start = time.monotonic()
    time.sleep(HOUR)
    elapsed = time.monotonic() - start
    tensor = torch.ones(1)
    dist.all_reduce(tensor)
    # Virtual time is one clock and the ranks' sleeps overlap on it: each measures its own hour (and the
    # steps around it), never the other's, so this fails in every schedule, with the same reading on replay.
    assert elapsed < HOUR, f"rank {rank} slept {elapsed:.0f}s"
