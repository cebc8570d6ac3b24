"""The controlled ``ray.util``: only ``ActorPool`` is provided."""

from __future__ import annotations

from typing import Any

from dnsse.frameworks.ray.actor_pool import ActorPool

__all__ = ["ActorPool"]


def __getattr__(name: str) -> Any:
    raise AttributeError(
        f"module 'ray.util' under dnsse has no attribute {name!r}: dnsse's controlled Ray provides "
        "ray.util.ActorPool only"
    )
