"""Imports of libraries run in one piece: no scheduling point inside them.

Only the first execution of a process runs a library's module code (later
ones find it in ``sys.modules``), so a scheduling point inside that code
would give the first execution choices that no other execution asks for: a
trace recorded in execution 40 would not replay in a fresh process, whose
execution 1 imports again. Worse, importlib holds a real lock on a module
while it runs its code; an agent switched away there leaves every other agent
that imports the module blocked on that real lock, out of dnsse's sight.
So while an agent imports (the ``import`` statement and
``importlib.import_module``), its scheduling points let it go on at once.
The program's own modules beside the target are not libraries: they are
imported afresh in every copy, with their points (see dnsse.engine.siblings).
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
from typing import Any, Iterator

from dnsse.engine.execution import current_agent

_real_import = builtins.__import__
_real_import_module = importlib.import_module


def _import(name: str, *arguments: Any, **keywords: Any) -> Any:
    agent = current_agent()
    if agent is None:
        return _real_import(name, *arguments, **keywords)
    agent.importing += 1
    try:
        return _real_import(name, *arguments, **keywords)
    finally:
        agent.importing -= 1


def _import_module(name: str, package: str | None = None) -> Any:
    agent = current_agent()
    if agent is None:
        return _real_import_module(name, package)
    agent.importing += 1
    try:
        return _real_import_module(name, package)
    finally:
        agent.importing -= 1


@contextlib.contextmanager
def imports_in_one_piece() -> Iterator[None]:
    """Install the atomic imports for the time of one execution."""
    builtins.__import__ = _import
    importlib.import_module = _import_module  # type: ignore[assignment]
    try:
        yield
    finally:
        builtins.__import__ = _real_import
        importlib.import_module = _real_import_module  # type: ignore[assignment]
