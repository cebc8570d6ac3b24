"""dnsse's own code, run in an agent's thread without the thread's trace function.

On CPython 3.11 the shared-state points (and branch coverage) come from a
``sys.settrace`` function in every agent's thread. While a thread has one,
*every* frame it runs pays for it, not only the program's: each call is a
call event, and each instruction takes the interpreter's slow tracing path
(a call costs 7x, a loop iteration 4-5x, here). The program calls into
dnsse all the time (a lock, a thread start, a scheduling point), and no
frame of dnsse has anything to trace, so those calls run with the trace
function lifted and put back on the way out: the program's frames keep
their own per-frame tracers and get every event as before.

Only for code that never calls back into the program: a callback of the
program (a thread's target, a predicate) run from inside would lose its
scheduling points. A method of a class the program may subclass is run
untraced only for dnsse's own classes (a subclass may override what the
method calls). Where no trace function is set (3.12+'s ``sys.monitoring``,
no coverage) the cost is one ``gettrace`` per call.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

gettrace = sys.gettrace
settrace = sys.settrace


def untraced(function: F) -> F:
    """``function``, run without the calling thread's trace function (put back when it returns or raises)."""

    @functools.wraps(function)
    def run_untraced(*arguments: Any, **keywords: Any) -> Any:
        trace = gettrace()
        if trace is None:
            return function(*arguments, **keywords)
        settrace(None)
        try:
            return function(*arguments, **keywords)
        finally:
            settrace(trace)

    return run_untraced  # type: ignore[return-value]


def untraced_method(method: F) -> F:
    """A method run untraced when its object's class is one of dnsse's (not the program's subclass)."""

    @functools.wraps(method)
    def run_untraced(self: object, *arguments: Any, **keywords: Any) -> Any:
        trace = gettrace()
        if trace is None or not type(self).__module__.startswith("dnsse."):
            return method(self, *arguments, **keywords)
        settrace(None)
        try:
            return method(self, *arguments, **keywords)
        finally:
            settrace(trace)

    return run_untraced  # type: ignore[return-value]
