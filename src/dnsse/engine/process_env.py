"""Each simulated process's own ``os.environ``: ranks that are threads of one process, each with its environment.

Under ``torchrun`` every rank's process has its own environment (``RANK``,
``LOCAL_RANK``, ...), and a child that ``mp.spawn`` starts inherits its
parent's as it was then. Here those processes are agents of one process, so
the one real environment is lent to the process whose agent runs: each time
an agent of another process runs again (the engine's ``on_resume``), the
environment as the previous holder left it is saved as that process's own,
and the resumed process's own is put in place, key by key through
``os.environ`` so that C code reading ``getenv`` sees it too. So
``os.environ[...]``, ``os.getenv`` and ``os.environ.get`` all read the running
rank's view, and a rank's writes stay its own. The isolation of every
execution puts the environment back as it was before the execution
(:mod:`.isolation`).
"""

from __future__ import annotations

import os
from typing import Callable, Hashable


class ProcessEnvironments:
    """The saved environments of the processes that do not hold the real one now.

    Kept as ``os.environ`` keeps them, encoded: a switch between ranks (tens
    per execution) copies and compares bytes, and touches only the names
    whose values differ (4 us a switch with 40 variables, where decoding
    every name and value took 60 us).
    """

    def __init__(self, process_here: Callable[[], Hashable | None]) -> None:
        # Which simulated process the running agent belongs to; None for the first (the launching) process.
        self._process_here = process_here
        self._saved: dict[Hashable | None, dict] = {}
        self.holder: Hashable | None = None

    def give(self, process: Hashable, environment: dict[str, str]) -> None:
        """``process`` starts with ``environment``."""
        encode_key, encode_value = os.environ.encodekey, os.environ.encodevalue  # type: ignore[attr-defined]
        self._saved[process] = {encode_key(name): encode_value(value) for name, value in environment.items()}

    def inherit(self, child: Hashable, parent: Hashable | None) -> None:
        """``child`` starts with a copy of ``parent``'s environment as it is now (a spawned process)."""
        self._saved[child] = dict(_RAW) if parent is self.holder else dict(self._saved.get(parent, _RAW))

    def resumed(self, agent: object) -> None:
        """An agent runs again: give the real environment to its process, if another one held it."""
        process = self._process_here()
        if process is self.holder or process not in self._saved:
            return
        self._saved[self.holder] = dict(_RAW)
        _put_in_place(self._saved.pop(process))
        self.holder = process


# The encoded names and values behind os.environ (CPython's os._Environ keeps them in _data): changed
# here only together with the C environment (putenv and unsetenv), as os.environ itself does.
_RAW: dict = os.environ._data  # type: ignore[attr-defined]


def _put_in_place(environment: dict) -> None:
    for name in [name for name in _RAW if name not in environment]:
        os.unsetenv(name)
        del _RAW[name]
    for name, value in environment.items():
        if _RAW.get(name) != value:
            os.putenv(name, value)
            _RAW[name] = value


def chained(first: Callable[[object], None] | None, second: Callable[[object], None]) -> Callable[[object], None]:
    """Both resume hooks, in order."""
    if first is None:
        return second

    def both(agent: object) -> None:
        first(agent)
        second(agent)

    return both
