"""Which agent runs on this OS thread, and the exception that unwinds an agent whose execution is over.

Kept below :mod:`.agent` and :mod:`.execution`, which both need them, so
that an agent starting runs no import (one per agent was a measurable part
of a short execution's cost).
"""

from __future__ import annotations

import _thread
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dnsse.engine.agent import ThreadAgent

_get_ident = _thread.get_ident

# The agent running on each OS thread, by the thread's ident. Not a thread-local: agents
# that share one OS thread as greenlets would each have an entry of their own in the
# thread's state dictionary, which every switch copies in and out
# (dnsse.engine.thread_state); their host sets this entry at each switch instead.
by_thread: dict[int, ThreadAgent] = {}


def current_agent() -> ThreadAgent | None:
    """The agent running on this OS thread, or ``None`` outside control."""
    return by_thread.get(_get_ident())


def set_current_agent(agent: ThreadAgent | None) -> None:
    if agent is None:
        by_thread.pop(_get_ident(), None)
    else:
        by_thread[_get_ident()] = agent


def _forget_other_threads() -> None:
    # A forked child runs only the thread that forked: another thread's ident may come back.
    mine = by_thread.get(_get_ident())
    by_thread.clear()
    if mine is not None:
        by_thread[_get_ident()] = mine


os.register_at_fork(after_in_child=_forget_other_threads)


class ExecutionAborted(BaseException):
    """Unwinds an agent whose execution is over (a bug was found, or a limit hit).

    A ``BaseException`` so that the program's own ``except Exception`` does not
    swallow it.
    """
