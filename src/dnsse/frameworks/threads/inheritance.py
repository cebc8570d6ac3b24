"""Thread-local state of libraries that threads and asyncio tasks take over from their creator.

A thread a program starts belongs to the same process as its creator, and an
asyncio task runs in its loop's OS thread; here each is an agent with an OS
thread of its own. So a framework registers a *carrier*: called in the
thread that starts the thread or creates the task, with ``"thread"`` or
``"task"``, it captures what the new agent must see (whom it acts for, the
loop thread's thread-local state) and returns the function that installs it
in the new agent's thread before its first step.
"""

from __future__ import annotations

from typing import Callable, Literal

Into = Literal["thread", "task"]
Carrier = Callable[[Into], Callable[[], None]]

_CARRIERS: list[Carrier] = []


def carry(carrier: Carrier) -> Callable[[], None]:
    """Register ``carrier``; the function returned unregisters it."""
    _CARRIERS.append(carrier)
    return lambda: _CARRIERS.remove(carrier)


def captured(into: Into) -> Callable[[], None] | None:
    """What every carrier captures now for a new ``into``, as one function that installs it; None when none is registered."""
    if not _CARRIERS:
        return None
    install = [carrier(into) for carrier in _CARRIERS]

    def apply() -> None:
        for step in install:
            step()

    return apply
