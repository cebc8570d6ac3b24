"""Thread-local state of libraries that an asyncio task takes over from its loop's thread.

On a real loop every task runs in the loop's one OS thread, so it sees that
thread's thread-local state (torch's grad mode, for one). Here each task is
an agent with an OS thread of its own, so a framework registers a *carrier*:
called in the thread that creates the task, it captures what the task must
see and returns the function that installs it in the task's thread before
the task's first step.
"""

from __future__ import annotations

from typing import Callable

Carrier = Callable[[], Callable[[], None]]

_CARRIERS: list[Carrier] = []


def carry(carrier: Carrier) -> Callable[[], None]:
    """Register ``carrier``; the function returned unregisters it."""
    _CARRIERS.append(carrier)
    return lambda: _CARRIERS.remove(carrier)


def captured() -> Callable[[], None] | None:
    """What every carrier captures now, as one function that installs it; None when none is registered."""
    if not _CARRIERS:
        return None
    install = [carrier() for carrier in _CARRIERS]

    def apply() -> None:
        for step in install:
            step()

    return apply
