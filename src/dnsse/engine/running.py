"""Which agent runs on this OS thread, and the exception that unwinds an agent whose execution is over.

Kept below :mod:`.agent` and :mod:`.execution`, which both need them, so
that an agent starting runs no import (one per agent was a measurable part
of a short execution's cost).
"""

from __future__ import annotations

import _thread
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dnsse.engine.agent import ThreadAgent


class _Running(_thread._local):
    # The class attribute answers for a thread that never set one: a missing
    # attribute would make every such lookup raise and catch an AttributeError.
    agent: ThreadAgent | None = None


_local = _Running()


def current_agent() -> ThreadAgent | None:
    """The agent running on this OS thread, or ``None`` outside control."""
    return _local.agent


def set_current_agent(agent: ThreadAgent | None) -> None:
    _local.agent = agent


class ExecutionAborted(BaseException):
    """Unwinds an agent whose execution is over (a bug was found, or a limit hit).

    A ``BaseException`` so that the program's own ``except Exception`` does not
    swallow it.
    """
