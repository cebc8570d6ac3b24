"""Ranks that split a batch of tokens, and skip the all-reduce when their share is empty.

Rank ``r`` takes the tokens past ``r * BLOCK``; a rank with none skips the
gradient all-reduce. For almost every batch size both ranks have tokens (or,
at 0, neither has), and only a batch of 1 to ``BLOCK`` tokens gives rank 0 a
share and rank 1 none: rank 0 then waits in an all-reduce rank 1 never
issues. ``main`` has the bug; ``every_rank_reduces`` joins the collective
with an empty gradient, as it should.
"""

from typing import Annotated

import torch
import torch.distributed as dist

import dnsse

BLOCK = 64


def _step(rank, tokens, skip_when_empty):
    share = tokens - rank * BLOCK
    grad = torch.full((2,), float(max(share, 0)))
    if share > 0 or not skip_when_empty:
        dist.all_reduce(grad)


def main(rank: int, world_size: int, tokens: Annotated[int, dnsse.Range(0, 100_000)] = 4096) -> None:
    _step(rank, tokens, skip_when_empty=True)


def every_rank_reduces(rank: int, world_size: int, tokens: Annotated[int, dnsse.Range(0, 100_000)] = 4096) -> None:
    _step(rank, tokens, skip_when_empty=False)
