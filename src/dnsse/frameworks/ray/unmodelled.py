"""Parts of Ray that dnsse does not model: using one stops the campaign (exit 2), never a bug.

The controlled ``ray`` offers what :mod:`.api` lists. A program that imports
another part (``ray.serve``, ``ray.data``, ``ray.train``, ``ray.tune``,
``ray.util.collective``, ...) or uses a name the controlled modules lack
(``ray.util.list_named_actors``, ``ray.get_runtime_context().get_accelerator_ids``, ...) would
otherwise fail with an ImportError or AttributeError that reads like a bug
of its own; here it is refused, naming the part (see
:mod:`dnsse.engine.uncontrolled`).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import types

from dnsse.engine.execution import current_agent
from dnsse.engine.uncontrolled import called_by_program, refuse

ADVICE = (
    "dnsse's controlled Ray models tasks, actors (sync, threaded, async), objects, resources, placement "
    "groups, ray.util.ActorPool and ray.util.queue; check the part of the program that uses those, or run this part without dnsse"
)


class UnmodelledRay(importlib.abc.MetaPathFinder):
    """Finds every ``ray.*`` module that the controlled Ray does not provide, and refuses to load it."""

    def __init__(self, controlled: frozenset[str]) -> None:
        self.controlled = controlled

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("ray.") or fullname in self.controlled:
            return None
        return importlib.util.spec_from_loader(fullname, _Refusing())


class _Refusing(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        if current_agent() is None and not called_by_program():
            raise ModuleNotFoundError(f"No module named {module.__name__!r} under dnsse's controlled Ray")
        refuse(module.__name__, ADVICE)


def refuse_dag(what: str) -> None:
    """``f.bind(...)``, ``Cls.bind(...)``, ``actor.method.bind(...)``: Ray's DAG API (``ray.dag``), not modelled."""
    refuse(f"{what}.bind (Ray's DAG API, ray.dag)", ADVICE)
