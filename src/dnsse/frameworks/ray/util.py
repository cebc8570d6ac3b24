"""The controlled ``ray.util``: ``ActorPool``, ``ray.util.queue`` and placement groups."""

from __future__ import annotations

from typing import Any

from dnsse.engine.uncontrolled import refusing_getattr
from dnsse.frameworks.ray import ray_queue as queue
from dnsse.frameworks.ray import scheduling_strategies
from dnsse.frameworks.ray.actor_pool import ActorPool
from dnsse.frameworks.ray.placement_groups import (
    PlacementGroup,
    get_current_placement_group,
    get_placement_group,
    placement_group,
    remove_placement_group,
)

__all__ = [
    "ActorPool", "queue", "scheduling_strategies", "PlacementGroup", "placement_group", "remove_placement_group",
    "get_placement_group", "get_current_placement_group",
]


def __getattr__(name: str) -> Any:
    # ray.util.collective, ray.util.list_named_actors, ...: not modelled, refused naming the API.
    return _unmodelled(name)


_unmodelled = refusing_getattr("ray.util", lambda: ", ".join(f"ray.util.{name}" for name in __all__))
