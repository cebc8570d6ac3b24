"""The driver's copy of the program, as worker processes tell its other modules apart.

The target's file runs as the driver's module copy (``__dnsse_target_3__``);
the modules beside it that it imports are that copy's ``__dnsse_target_3__.helper``
and so on (see :mod:`dnsse.engine.siblings`). Ray ships those by name, so a
worker process imports its own ``helper`` (see :mod:`.processes`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ProgramModules:
    """The driver module's name and a dot, and the names importable beside the target."""

    prefix: str = ""
    names: frozenset[str] = frozenset()

    def relative(self, module_name: object) -> str | None:
        """``helper`` for the driver's ``<copy>.helper``; None for anything else."""
        if self.prefix and isinstance(module_name, str) and module_name.startswith(self.prefix):
            return module_name[len(self.prefix):]
        return None
