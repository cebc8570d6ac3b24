"""APIs dnsse knows it does not control: calling one stops the campaign with exit 2, never a bug.

A program that calls an API whose effects happen outside the controlled
agents (another process, a real network store, a thread dnsse did not
start, a part of Ray that is not modelled) cannot be checked: its outcome
would be neither trustworthy as a bug nor as a pass. Each framework lists
such APIs as :class:`Refusal` entries; while the framework is active, each
entry's attribute is replaced by a stand-in that, called from an agent,
raises :class:`NotUnderControl`. Outside an agent (dnsse's own code) the
original runs.

:class:`NotUnderControl` is a ``BaseException``, so the program's own
``except Exception`` does not turn it into a normal outcome; and the
execution is told at once (``Execution.refuse``), so even a program that
catches ``BaseException`` cannot hide it: the runner turns the refusal into
exit 2 after the run. Raised where no execution runs (the target module's
top-level code while dnsse reads its inputs), it is bad input all the same.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterator, NoReturn, Sequence

from dnsse.engine.execution import current_agent
from dnsse.engine.location import frame_location
from dnsse.errors import NotUnderControl

# Copies of the target module are named __dnsse_target_N__ (see dnsse.engine.target).
TARGET_MODULE_PREFIX = "__dnsse_target_"


def refuse(api: str, advice: str) -> NoReturn:
    """Stop the program at a call of ``api``: tell the running execution, then unwind the caller."""
    agent = current_agent()
    files = agent.execution.source_files if agent is not None else frozenset()
    error = NotUnderControl(api, advice, _program_location(files))
    if agent is not None:
        agent.execution.refuse(error.message)
    raise error


@dataclass(frozen=True)
class Refusal:
    """``module.attribute`` (a function or a class) that dnsse refuses to run for an agent, and why."""

    module: str
    attribute: str
    api: str
    advice: str


def import_refused(entries: Sequence[Refusal]) -> None:
    """Import now the modules ``refused(entries)`` patches (those that import; see :func:`refused`).

    A framework does it as it is built, before anything of the target runs:
    a worker process forked later (dnsse.campaign.fork_server) then has them
    already, instead of importing them (torch's elastic launcher: 0.1 s of
    CPU) in each worker.
    """
    for name in dict.fromkeys(entry.module for entry in entries):
        _module(name)


@contextlib.contextmanager
def refused(entries: Sequence[Refusal]) -> Iterator[None]:
    """Replace every entry's attribute by its refusing stand-in while the block runs.

    An entry whose module cannot be imported, or lacks the attribute (another
    version of the library), is skipped: there is nothing to call.
    """
    saved: list[tuple[Any, str, Any]] = []
    for entry in entries:
        owner = _module(entry.module)
        original = getattr(owner, entry.attribute, None) if owner is not None else None
        if original is None:
            continue
        saved.append((owner, entry.attribute, original))
        setattr(owner, entry.attribute, _stand_in(original, entry))
    try:
        yield
    finally:
        for owner, attribute, original in reversed(saved):
            setattr(owner, attribute, original)


def _stand_in(original: Any, entry: Refusal) -> Any:
    if isinstance(original, type):

        def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
            if _agent_calling():
                refuse(entry.api, entry.advice)
            original.__init__(self, *args, **kwargs)

        return type(original.__name__, (original,), {"__init__": __init__, "__module__": original.__module__})

    @functools.wraps(original)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if _agent_calling():
            refuse(entry.api, entry.advice)
        return original(*args, **kwargs)

    return guarded


def _agent_calling() -> bool:
    """Whether an agent's code makes the call: not dnsse's, nor a strategy's while the scheduler runs."""
    agent = current_agent()
    return agent is not None and not agent.execution.scheduling


def _module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - an optional part of a library that is not there: nothing to refuse
        return None


def _program_location(source_files: frozenset[str]) -> str | None:
    """Where the program made the call: its innermost frame in the target's files."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename in source_files:
            return frame_location(frame)
        frame = frame.f_back
    return None


def refusing_getattr(module_name: str, supported: Callable[[], str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for a controlled module: a public name it lacks is not under control."""

    def __getattr__(name: str) -> Any:
        if name.startswith("_") or not (_agent_calling() or (current_agent() is None and called_by_program())):
            raise AttributeError(f"module {module_name!r} under dnsse has no attribute {name!r}")
        refuse(
            f"{module_name}.{name}",
            f"dnsse's controlled {module_name} provides {supported()}; use those, or check this part of the "
            "program without it",
        )

    return __getattr__


def called_by_program() -> bool:
    """Whether the program's code is on the stack (its module's top level runs outside any agent, too)."""
    frame = sys._getframe(1)
    while frame is not None:
        if str(frame.f_globals.get("__name__", "")).startswith(TARGET_MODULE_PREFIX):
            return True
        frame = frame.f_back
    return False
