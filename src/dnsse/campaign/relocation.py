"""Traces that travel: a trace recorded in one checkout replays in another.

A trace names its target by absolute path (``/ci/work/repo/train.py:main``,
or a launch command with the absolute directory it ran in), and records the
root of the project that held it: the nearest directory above the target
with a ``.git``, ``pyproject.toml``, ``setup.py`` or ``setup.cfg`` (the
target's own directory if none). Downloaded from CI onto a laptop, the
recorded path does not exist; the same file, relative to the project root,
does. ``dnsse replay`` then looks for it under ``--root DIR`` when given,
else under the project that holds the current directory, else under the
project that holds the trace file (a trace kept inside its checkout), and
replays the first match. The source digest still decides whether the file
found is the program that was recorded.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from dnsse.engine.target import is_command
from dnsse.errors import BadInput
from dnsse.campaign.trace import Trace

ROOT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")


def project_root(start: Path) -> Path:
    """The nearest directory at or above ``start`` (a file or directory) that marks a project's root."""
    start = start.resolve()
    here = start if start.is_dir() else start.parent
    for directory in (here, *here.parents):
        if any((directory / marker).exists() for marker in ROOT_MARKERS):
            return directory
    return here


def anchor(trace: Trace) -> Path | None:
    """The path a trace's target stands on: its file (``FILE.py:FUNC``) or its launch directory."""
    if trace.directory:
        return Path(trace.directory)
    if is_command(trace.target):
        return None
    path, colon, _ = trace.target.rpartition(":")
    return Path(path) if colon else None


def locate(trace: Trace, trace_path: Path, root: Path | None = None) -> tuple[Trace, str | None]:
    """``trace`` with its target moved to where it is here, and a note saying so (``None`` if not moved).

    BadInput when ``root`` is given and the target is not under it, or when
    the recorded target is gone and no candidate root holds it.
    """
    recorded = anchor(trace)
    if recorded is None:
        return trace, None
    if root is not None:
        if not root.is_dir():
            raise BadInput(f"--root {root}: no such directory")
        moved = _moved_under(trace, recorded, root.resolve())
        if moved is None:
            raise BadInput(
                f"the trace {trace_path} names {_split(trace, recorded)[1]} (recorded under "
                f"{_split(trace, recorded)[0]}), which is not under --root {root}"
            )
        return moved, _note(trace, moved)
    if recorded.exists():
        return trace, None
    for candidate in (project_root(Path.cwd()), project_root(trace_path)):
        moved = _moved_under(trace, recorded, candidate)
        if moved is not None:
            return moved, _note(trace, moved)
    raise BadInput(
        f"the trace {trace_path} names {recorded}, which does not exist here; it was recorded in the project "
        f"{trace.root or recorded.parent}. Replay it from a checkout of that project, or say where the "
        f"checkout is: dnsse replay {trace_path} --root DIR"
    )


def _moved_under(trace: Trace, recorded: Path, root: Path) -> Trace | None:
    """``trace`` with every path under its recorded root moved under ``root``; None if its anchor is not there."""
    old_root, relative = _split(trace, recorded)
    if not (root / relative).exists():
        return None
    old, new = str(old_root), str(root)

    def move(text: str) -> str:
        return new if text == old else text.replace(old + "/", new + "/")

    return dataclasses.replace(
        trace, target=move(trace.target), directory=move(trace.directory) if trace.directory else "", root=new
    )


def _split(trace: Trace, recorded: Path) -> tuple[Path, Path]:
    """The recorded project root and the anchor relative to it (a trace of an older dnsse records no root:
    the anchor's own directory stands for it)."""
    if trace.root:
        try:
            return Path(trace.root), recorded.relative_to(trace.root)
        except ValueError:
            pass
    return recorded.parent, Path(recorded.name)


def _note(trace: Trace, moved: Trace) -> str | None:
    if moved.target == trace.target and moved.directory == trace.directory:
        return None
    return f"dnsse: the trace was recorded in {trace.root or '(unknown)'}; replaying the target found in {moved.root}"
