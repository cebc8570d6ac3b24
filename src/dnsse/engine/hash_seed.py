"""The hash seed of the process: fixed, so that ``set`` and ``dict`` orders repeat.

The iteration order of a ``set`` of strings depends on ``PYTHONHASHSEED``,
which Python reads once at start-up. A program that starts threads in the
order of a set would take a different path on every run of the same choices,
so a campaign runs under a fixed seed (the one the user set, or
:data:`DEFAULT_HASH_SEED`), records it in every trace, and ``replay``
re-executes itself under the trace's seed. Re-executing is one ``execve`` of
the same command line before anything heavy is imported. A process that
only supervises the one that runs the program needs no fixed seed itself: it
hands the seed down to its child instead (:func:`hand_down_hash_seed`), which
saves the start of one Python.
"""

from __future__ import annotations

import os
import sys

DEFAULT_HASH_SEED = 0
_VARIABLE = "PYTHONHASHSEED"
_MAX_SEED = 4_294_967_295


def current_hash_seed() -> int | None:
    """The seed this process hashes strings with, or ``None`` when it is random."""
    if sys.flags.ignore_environment:
        return None
    text = os.environ.get(_VARIABLE, "")
    if not text.isdigit() or int(text) > _MAX_SEED:
        return None
    return int(text)


def campaign_hash_seed() -> int:
    """The seed a campaign runs under: the user's fixed one, else the default."""
    seed = current_hash_seed()
    return DEFAULT_HASH_SEED if seed is None else seed


def valid_hash_seed(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_SEED


def run_under_hash_seed(seed: int) -> None:
    """Re-execute this command under ``seed`` unless it already runs under it; returns only then.

    Does nothing when Python ignores the environment (``-E``, ``-I``): the
    seed could not take effect, and re-executing would loop.
    """
    if current_hash_seed() == seed or sys.flags.ignore_environment:
        return
    environment = dict(os.environ)
    environment[_VARIABLE] = str(seed)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], environment)


def hand_down_hash_seed(seed: int) -> None:
    """Let the processes this one starts run under ``seed``; this one keeps the seed it has."""
    os.environ[_VARIABLE] = str(seed)
