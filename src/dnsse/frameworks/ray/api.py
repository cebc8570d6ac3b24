"""The controlled ``ray`` module that a target's ``import ray`` gets under dnsse.

Supported: ``init``, ``shutdown``, ``is_initialized``, ``remote`` (functions
and classes, with options, and ``.options()``), ``method``, ``get`` (one ref
or a list, with ``timeout``), ``wait`` (``num_returns``, ``timeout``),
``put``, ``kill``, ``get_actor``, ``ObjectRef``, ``ray.exceptions``,
``ray.util.ActorPool``, ``ray.util.queue``, streaming generators, ``cancel``,
resources (``ray.init(num_cpus=...)``, see :mod:`.resources`) and placement
groups (``ray.util.placement_group``, see :mod:`.placement_groups`). ``get``,
``wait``, ``put``, submissions, ``cancel`` and ``kill`` are scheduling
points. Time is virtual: a pending ``get`` or ``wait`` with a timeout may
expire at any scheduling point (a choice).

The events the runtime emits are listed in :mod:`.framework`.

This module is the top layer of the controlled Ray and holds no behaviour of
its own: it gathers the public names from the modules that implement them
(:mod:`.session`, :mod:`.decorators`, :mod:`.ref_calls`,
:mod:`.actor_control`, ...), so no part of the runtime ever needs to import
the module a target sees.

``get_runtime_context()`` answers for the calling task or actor (see
:mod:`.runtime_context`).
"""

from __future__ import annotations

from dnsse.engine.uncontrolled import refusing_getattr
from dnsse.frameworks.ray import errors as exceptions
from dnsse.frameworks.ray import util
from dnsse.frameworks.ray.actor_control import get_actor, kill
from dnsse.frameworks.ray.decorators import method, remote
from dnsse.frameworks.ray.ref_calls import cancel, get, put, wait
from dnsse.frameworks.ray.refs import ObjectRef
from dnsse.frameworks.ray.runtime_context import get_runtime_context
from dnsse.frameworks.ray.session import init, is_initialized, shutdown
from dnsse.frameworks.ray.streaming import DynamicObjectRefGenerator, ObjectRefGenerator

__all__ = [
    "ObjectRef", "ObjectRefGenerator", "DynamicObjectRefGenerator", "exceptions", "util", "init", "shutdown",
    "is_initialized", "remote", "method",
    "get", "wait", "put", "kill", "get_actor", "cancel", "get_runtime_context",
]

# A public name the controlled Ray lacks (ray.get_runtime_context, ray.data, ...) is refused, naming it.
__getattr__ = refusing_getattr("ray", lambda: ", ".join(f"ray.{name}" for name in __all__))
