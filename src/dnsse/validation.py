"""Every number and path a user gives is checked before any work starts.

A campaign that fails after an hour because ``--json`` names a directory, or
that exhausts the machine's memory because ``--world-size`` was a typo, costs
the user more than a message up front. So each size has a cap that names
itself in the message, non-finite numbers are refused, and output paths are
proven writable before the first execution. Traces are read with the same
caps (see :mod:`dnsse.campaign.trace`).
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dnsse.errors import BadInput

# Ranks are threads of one process, each with its own copy of the module: a
# few hundred are already slow; beyond this, the world is a typo.
MAX_WORLD_SIZE = 256
MAX_BUDGET = 100_000_000
MAX_STEPS = 100_000_000
# One execution's wall-clock limit, and the whole campaign's: a day, a year.
MAX_EXECUTION_SECONDS = 86_400.0
MAX_TIME_BUDGET_SECONDS = 366 * 86_400.0
MAX_WORKERS = 256
MAX_PCT_DEPTH = 64
MAX_PREEMPTION_BOUND = 64
MAX_SEED = 2**63 - 1
# Specifications and traces are read whole: bounded, so a bad file cannot exhaust memory.
MAX_SPEC_CHARS = 10_000
MAX_SPEC_DEPTH = 200
MAX_TRACE_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class Bounds:
    """A number's allowed range, inclusive; ``low_open`` excludes ``low`` itself."""

    option: str
    low: float
    high: float
    low_open: bool = False


def check_number(value: float | int | None, bounds: Bounds) -> None:
    """BadInput unless ``value`` is finite and within ``bounds`` (``None``: the option was not given)."""
    if value is None:
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise BadInput(f"{bounds.option} must be a finite number, got {value}")
    too_low = value <= bounds.low if bounds.low_open else value < bounds.low
    if too_low:
        relation = "more than" if bounds.low_open else "at least"
        raise BadInput(f"{bounds.option} must be {relation} {_number(bounds.low)}, got {_number(value)}")
    if value > bounds.high:
        raise BadInput(
            f"{bounds.option} {_number(value)} is more than dnsse allows ({_number(bounds.high)} at most); "
            "give a smaller value"
        )


def parse_max_delay(text: str) -> float:
    """``--max-delay``: seconds of virtual time, at least 0, or ``inf`` for no bound."""
    if text.strip().lower() in ("inf", "infinity"):
        return math.inf
    try:
        value = float(text)
    except ValueError:
        raise BadInput(f"--max-delay must be a number of seconds or inf, got {text!r}") from None
    check_number(value, Bounds("--max-delay", 0, MAX_EXECUTION_SECONDS))
    return value


def check_spec_text(text: str, where: str) -> None:
    """Refuse a specification too long to be a property anybody wrote by hand."""
    if len(text) > MAX_SPEC_CHARS:
        raise BadInput(f"{where}: a specification of {len(text)} characters is longer than dnsse reads "
                       f"({MAX_SPEC_CHARS} at most)")


def writable_directory(path: Path, option: str) -> None:
    """Create ``path`` if needed and prove a file can be written in it."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise BadInput(f"{option} {path} is a file, not a directory; give a directory for the traces")
    try:
        path.mkdir(parents=True, exist_ok=True)
        _probe(path)
    except OSError as error:
        raise BadInput(f"{option} {path} is not a writable directory: {error.strerror or error}") from None


def writable_file(path: Path, option: str) -> None:
    """Prove ``path`` can be written (its directory is created if needed) without touching it."""
    path = Path(path)
    if path.is_dir():
        raise BadInput(f"{option} {path} is a directory; give the path of a file to write")
    if path.exists() and not os.access(path, os.W_OK):
        raise BadInput(f"{option} {path} exists and is not writable")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _probe(path.parent)
    except OSError as error:
        raise BadInput(
            f"{option} {path}: cannot write in {path.parent}: {error.strerror or error}"
        ) from None


def _probe(directory: Path) -> None:
    handle, name = tempfile.mkstemp(prefix=".dnsse-probe-", dir=directory)
    os.close(handle)
    os.unlink(name)


def _number(value: float | int) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)
