"""dnsse: find concurrency bugs in distributed AI programs by controlled, searched execution."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dnsse.api import Range, TensorSpec, assume, emit, test

__version__ = "0.1.0"
# The project's home and issue tracker, as pyproject.toml's [project.urls] declares them.
PROJECT_URI = "https://github.com/dnsse/dnsse"
ISSUES_URI = f"{PROJECT_URI}/issues"
__all__ = ["Range", "TensorSpec", "assume", "emit", "test", "__version__"]


def __getattr__(name: str) -> Any:
    if name in ("Range", "TensorSpec", "assume", "emit", "test"):
        # Loaded on first use: every ``dnsse.*`` module imports this package first, and the API
        # pulls in the engine, which a process that only supervises (``dnsse check``) never needs.
        import dnsse.api

        return getattr(dnsse.api, name)
    raise AttributeError(f"module 'dnsse' has no attribute {name!r}")
