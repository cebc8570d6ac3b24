"""The controlled ``ray.util``: ``ActorPool`` and ``ray.util.queue``."""

from __future__ import annotations

from typing import Any

from dnsse.frameworks.ray.actor_pool import ActorPool

__all__ = ["ActorPool", "queue"]


def __getattr__(name: str) -> Any:
    if name == "queue":
        # Imported on first use: the queue is built on the ``ray`` module, which imports this one.
        from dnsse.frameworks.ray import ray_queue

        return ray_queue
    raise AttributeError(
        f"module 'ray.util' under dnsse has no attribute {name!r}: dnsse's controlled Ray provides "
        "ray.util.ActorPool and ray.util.queue only"
    )
