"""Deadlocks under NCCL semantics, told as the device hangs they would be.

When every rank waits and some rank's NCCL stream still holds work, the
hang is on the GPU: each stream is stuck at its first kernel, waiting for a
peer's kernel that its own stream has queued behind something else (the
classic case: both ranks enqueue an unbatched send before their receive).
The bug stays a ``deadlock``; its message starts with ``NCCL stream hang``
and its details say where each stream is stuck. A collective that a rank
never issued before it finished is still a ``collective_mismatch``.
"""

from __future__ import annotations

from dnsse.engine.agent import Agent
from dnsse.engine.bugs import Bug, BugKind
from dnsse.frameworks.torch_dist.collectives import Part
from dnsse.frameworks.torch_dist.p2p import Message, Receive
from dnsse.frameworks.torch_dist.streams import P2P_STREAM, Enqueued
from dnsse.frameworks.torch_dist.world import World


def kernel_text(op: Enqueued) -> str:
    """What a stuck kernel is, e.g. ``send(dst=1, tag=0) on rank 0``."""
    if isinstance(op, Message):
        return f"{op.op}(dst={op.dst}, tag={op.tag}) on rank {op.state.rank}"
    if isinstance(op, Receive):
        return op.describe()
    if isinstance(op, Part):
        return op.instance.describe()
    return op.op


def explain_stream_hang(world: World, blocked: list[Agent]) -> Bug | None:
    stuck = [(state, state.streams.pending()) for state in world.ranks]
    stuck = [(state, ops) for state, ops in stuck if ops]
    if not stuck:
        return None
    for state, ops in stuck:
        for op in ops:
            if isinstance(op, Part):
                mismatch = world.collectives.unjoined(op.instance, state.rank, world.ranks)
                if mismatch is not None:
                    return mismatch
    details = []
    heads = []
    # Sends and receives at a stream's head: on a pair's own stream (unbatched), or on the group's (batched).
    unbatched = batched = False
    for state, _ in stuck:
        for stream in state.streams.by_key.values():
            entry = stream.head()
            if entry is None:
                continue
            texts = [kernel_text(op) for op in entry.ops if not op.done]
            heads.append(texts[0])
            if any(isinstance(op, (Message, Receive)) for op in entry.ops):
                unbatched = unbatched or stream.key.startswith(P2P_STREAM)
                batched = batched or not stream.key.startswith(P2P_STREAM)
            sites = ", ".join(sorted({op.site for op in entry.ops if not op.done}))
            details.append(
                f"rank {state.rank}'s NCCL stream for {stream.label} is stuck at {' + '.join(texts)} "
                f"(issued at {sites}), with {len(stream.entries) - 1} more queued behind it"
            )
    for agent in blocked:
        if agent.waiting is not None and getattr(agent, "handle", None) is not None:
            details.append(f"{agent.name}'s host waits for {agent.waiting.describe()}")
    ranks = ", ".join(str(state.rank) for state, _ in stuck)
    hint = ""
    if unbatched:
        hint = (
            "; an unbatched send or recv holds its stream until the peer's matching kernel runs, so peers must "
            "order them to match or batch them (batch_isend_irecv)"
        )
    elif batched:
        hint = (
            "; a batch_isend_irecv runs on its group's collective stream, in order with the group's collectives, "
            "so peers must issue batches and collectives in the same order"
        )
    return Bug(
        BugKind.DEADLOCK,
        f"NCCL stream hang (the GPU would wait forever): the NCCL streams of ranks {ranks} are stuck, "
        f"first at {heads[0] if heads else 'work that never started'}{hint}",
        details=details,
    )
