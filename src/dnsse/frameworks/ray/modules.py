"""Make the target's ``import ray`` resolve to the controlled runtime, and undo it.

The controlled modules are put in ``sys.modules`` under Ray's names for the
campaign; whatever was there before (the real Ray, when the campaign itself
runs on a Ray cluster) is put back afterwards. The real Ray is never imported
here. The controlled threading primitives are installed too, so that a
``threading.Lock`` in a threaded actor is a scheduling point and asyncio
runs on controlled event loops.
"""

from __future__ import annotations

import contextlib
import sys
import types
from typing import Iterator

from dnsse.frameworks.ray import (
    actor_pool,
    actors,
    api,
    errors,
    placement_groups,
    ray_queue,
    raylet,
    scheduling_strategies,
    tasks,
    util,
)
from dnsse.frameworks.ray.unmodelled import UnmodelledRay
from dnsse.frameworks.threads.patching import controlled_threading

_MISSING = object()


def _controlled_modules() -> dict[str, types.ModuleType]:
    return {
        "ray": api,
        "ray.exceptions": errors,
        "ray._raylet": raylet,
        "ray.util": util,
        "ray.util.actor_pool": actor_pool,
        "ray.util.queue": ray_queue,
        "ray.util.placement_group": placement_groups,
        "ray.util.scheduling_strategies": scheduling_strategies,
        "ray.actor": actors,
        "ray.remote_function": tasks,
    }


@contextlib.contextmanager
def controlled_ray() -> Iterator[None]:
    modules = _controlled_modules()
    saved_modules = {name: sys.modules.get(name, _MISSING) for name in modules}
    # Packages while active, so that `import ray.serve` reaches the finder that refuses it.
    unmodelled = UnmodelledRay(frozenset(modules))
    with controlled_threading():
        try:
            sys.modules.update(modules)
            api.__path__ = util.__path__ = []  # type: ignore[attr-defined]
            sys.meta_path.insert(0, unmodelled)
            yield
        finally:
            sys.meta_path.remove(unmodelled)
            del api.__path__, util.__path__  # type: ignore[attr-defined]
            for name, previous in saved_modules.items():
                if previous is _MISSING:
                    sys.modules.pop(name, None)
                else:
                    sys.modules[name] = previous  # type: ignore[assignment]
