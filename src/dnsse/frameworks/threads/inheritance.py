"""Thread-local state of libraries, as threads and asyncio tasks see it.

Here every thread and every asyncio task is an agent with an OS thread of
its own, where in the program a task runs in its loop's thread. Frameworks
register two things:

- a *carrier*: called in the thread that starts a thread or creates a task,
  it captures what the new agent must take over (whom it acts for: a torch
  rank) and returns the function that installs it in the new agent's
  thread before its first step;
- a :class:`ThreadState`: thread-local state that all code on one OS thread
  shares (torch's grad mode). All tasks of a real loop see one copy of it,
  so a loop carries that copy from one step to the next (:func:`snapshot`
  after a step, :func:`restore` before the next, whichever task takes it).
  A new thread starts with the library's defaults, as a real one does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

Carrier = Callable[[], Callable[[], None]]


@dataclass(frozen=True)
class ThreadState:
    """How to read a library's thread-local state, and how to set it in the calling thread."""

    capture: Callable[[], object]
    install: Callable[[object], None]


_CARRIERS: list[Carrier] = []
_THREAD_STATES: list[ThreadState] = []


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


def share(state: ThreadState) -> Callable[[], None]:
    """Register ``state`` as shared by the code of one OS thread; the function returned unregisters it."""
    _THREAD_STATES.append(state)
    return lambda: _THREAD_STATES.remove(state)


def snapshot() -> tuple[object, ...]:
    """The calling thread's registered thread-local state."""
    return tuple(state.capture() for state in _THREAD_STATES)


def restore(saved: tuple[object, ...]) -> None:
    """Make the calling thread's registered thread-local state ``saved`` (taken by :func:`snapshot`)."""
    for state, value in zip(_THREAD_STATES, saved):
        state.install(value)
