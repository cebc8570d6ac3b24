"""The controlled ``ray.util``: ``ActorPool`` and ``ray.util.queue``."""

from __future__ import annotations

from typing import Any

from dnsse.engine.uncontrolled import refusing_getattr
from dnsse.frameworks.ray.actor_pool import ActorPool

__all__ = ["ActorPool", "queue"]


def __getattr__(name: str) -> Any:
    if name == "queue":
        # Imported on first use: the queue is built on the ``ray`` module, which imports this one.
        from dnsse.frameworks.ray import ray_queue

        return ray_queue
    # ray.util.placement_group, ray.util.collective, ...: not modelled, refused naming the API.
    return _unmodelled(name)


_unmodelled = refusing_getattr("ray.util", lambda: "ray.util.ActorPool and ray.util.queue")
