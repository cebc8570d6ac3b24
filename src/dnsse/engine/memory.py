"""The memory limit of the processes that run a target: exhausting it is a ``crash``, not the machine's end.

A target that allocates without bound would take every process on the
machine down with it (the kernel's out-of-memory killer picks its victims by
size, not by guilt). The supervising process therefore starts the process
that runs the executions with a limit on its data (``RLIMIT_DATA``: the
heap and private writable mappings, not the shared libraries' code, so
importing torch costs ~230 MiB of it, not its 700 MiB of address space).
Worker processes inherit it. Past the limit an allocation fails: Python
raises ``MemoryError`` (torch's allocator a ``RuntimeError``), which would
read as an exception of the program; the run's bug is made a ``crash``
(memory exhausted) instead, with the limit in its message, and the trace
records the limit so that ``dnsse replay`` runs under the same one.
"""

from __future__ import annotations

import os
import re
import resource

from dnsse.engine.bugs import Bug, BugKind
from dnsse.errors import BadInput

MIB = 1024 * 1024
# Below this, dnsse and Python themselves do not fit.
MIN_MEMORY_LIMIT = 128 * MIB
# By default, the processes that run executions share half of the machine's memory.
DEFAULT_SHARE = 0.5
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1024, "m": MIB, "g": 1024 * MIB, "t": 1024 * 1024 * MIB}
# glibc serves large blocks from its heap once a large block was freed (its mmap threshold grows), and
# keeps that heap: a program that exhausted the limit would leave the process at the limit. A fixed
# threshold maps every large block on its own and gives it back when it is freed.
MEMORY_RETURNED = {"MALLOC_MMAP_THRESHOLD_": str(128 * 1024)}
# What an allocation that failed says, by the exception's first words.
_EXHAUSTED = ("MemoryError", "RuntimeError: DefaultCPUAllocator: can't allocate memory")


def machine_memory() -> int:
    """The machine's physical memory, in bytes."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def default_memory_limit(processes: int) -> int:
    """Each of ``processes`` processes running executions gets an equal share of half of the memory."""
    return max(MIN_MEMORY_LIMIT, int(machine_memory() * DEFAULT_SHARE) // max(1, processes))


def parse_memory_limit(text: str) -> int:
    """``--memory-limit``'s value (``512M``, ``4G``, ``1.5GiB``, bytes without a unit); BadInput when out of range."""
    match = _SIZE.match(text)
    if match is None:
        raise BadInput(f"--memory-limit {text!r} is not a size; give one such as 512M or 4G")
    size = int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    if size < MIN_MEMORY_LIMIT:
        raise BadInput(f"--memory-limit must be at least {show_size(MIN_MEMORY_LIMIT)}, got {show_size(size)}")
    check_memory_limit(size, "--memory-limit")
    return size


def check_memory_limit(size: int, where: str) -> None:
    """A limit above the machine's memory would let the target take the machine after all."""
    if size > machine_memory():
        raise BadInput(
            f"{where} {show_size(size)} is more than this machine's memory ({show_size(machine_memory())}); "
            "give a smaller value"
        )


def show_size(size: int) -> str:
    for unit, factor in (("GiB", 1024 * MIB), ("MiB", MIB)):
        if size >= factor:
            value = size / factor
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"


def limit_memory(size: int) -> None:
    """Limit this process (and the processes it starts) to ``size`` bytes of data."""
    resource.setrlimit(resource.RLIMIT_DATA, (size, size))


def memory_limit() -> int | None:
    """This process's limit on its data, or ``None`` when there is none."""
    soft, _ = resource.getrlimit(resource.RLIMIT_DATA)
    return None if soft == resource.RLIM_INFINITY else soft


def exhausted(bug: Bug | None) -> Bug | None:
    """``bug`` as a ``crash`` when it is a failed allocation under this process's limit; else ``bug``."""
    limit = memory_limit()
    if bug is None or limit is None or bug.kind != BugKind.EXCEPTION or not bug.message.startswith(_EXHAUSTED):
        return bug
    return Bug(
        BugKind.CRASH,
        f"memory exhausted: the program went past the memory limit of {show_size(limit)} (--memory-limit)",
        details=[f"{bug.message} in {bug.agent}" if bug.agent else bug.message, *bug.details],
        agent=bug.agent,
        step=bug.step,
    )


def is_exhausted(bug: Bug | None) -> bool:
    """Whether ``bug`` is memory exhaustion: the process may keep the memory, so a fresh one goes on."""
    return bug is not None and bug.kind == BugKind.CRASH and bug.message.startswith("memory exhausted")
