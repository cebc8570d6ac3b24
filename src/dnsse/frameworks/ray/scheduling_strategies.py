"""The controlled ``ray.util.scheduling_strategies``: where a task or actor is placed.

Only ``PlacementGroupSchedulingStrategy`` means something on the controlled
one-node cluster (see :mod:`.placement_groups`); the node-affinity and label
strategies are refused, naming them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dnsse.engine.uncontrolled import refusing_getattr

__all__ = ["PlacementGroupSchedulingStrategy"]


@dataclass
class PlacementGroupSchedulingStrategy:
    """Run in ``placement_group``'s bundle ``placement_group_bundle_index`` (-1: any bundle)."""

    placement_group: Any
    placement_group_bundle_index: int = -1
    placement_group_capture_child_tasks: bool | None = None


__getattr__ = refusing_getattr(
    "ray.util.scheduling_strategies", lambda: "ray.util.scheduling_strategies.PlacementGroupSchedulingStrategy"
)
