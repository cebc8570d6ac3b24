"""Running a launch command's file as ``__main__`` inside an agent, as ``python FILE.py ARGS`` runs it.

The file's code runs to its end (its ``if __name__ == "__main__":`` block
included) with ``sys.argv`` as the command gives it. Two ends of a real run
are the command's fault, not the program's, and are bad input (exit 2),
never a bug: ``argparse`` rejecting the arguments (``python`` exits with
status 2 and a usage line), and a module that is not installed.
``sys.exit(0)`` is a normal end, as in Python.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Callable

from dnsse.engine.execution import ExecutionAborted, current_agent

if TYPE_CHECKING:
    from dnsse.engine.target import LoadedTarget


def run_as_main(target: LoadedTarget, announce: Callable[[types.ModuleType], None] | None = None) -> None:
    """Run ``target``'s launch file as ``__main__`` in the calling agent; its copy is released at the end.

    ``announce`` is told the module before its code runs.
    """
    launch = target.launch
    assert launch is not None
    sys.argv = list(launch.argv)
    try:
        module = target.instantiate(announce)
    except SystemExit as end:
        if end.code in (0, None):
            return
        rejected = _argparse_message(end)
        if rejected is not None:
            _refuse(
                f"the program rejected its command-line arguments ({rejected}); `{launch}` exits with status "
                f"{end.code} the same way outside dnsse. Fix the arguments after the file name"
            )
        raise
    except ModuleNotFoundError as error:
        _refuse(f"the program imports {error.name!r}, which is not installed for this Python ({sys.executable})")
    target.release(module)


def _refuse(why: str) -> None:
    agent = current_agent()
    if agent is not None:
        agent.execution.refuse(why)
    raise ExecutionAborted()


def _argparse_message(end: SystemExit) -> str | None:
    """What ``ArgumentParser.error`` said, when it is what exited; None for any other exit."""
    trace: types.TracebackType | None = end.__traceback__
    message = None
    while trace is not None:
        frame = trace.tb_frame
        if frame.f_globals.get("__name__") == "argparse" and frame.f_code.co_name == "error":
            parser = frame.f_locals.get("self")
            message = f"{getattr(parser, 'prog', 'the program')}: error: {frame.f_locals.get('message')}"
        trace = trace.tb_next
    return message
