"""Every execution starts from the same state: a fresh directory and seeded RNGs."""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import sys
import tempfile
from typing import Iterator

from dnsse.engine.flight import supervised_directory


@contextlib.contextmanager
def fresh_working_directory() -> Iterator[str]:
    """Run inside a new empty directory, removed afterwards."""
    previous = os.getcwd()
    # Under a supervisor, inside its directory: removed with it even when the process dies.
    supervised = supervised_directory()
    directory = tempfile.mkdtemp(prefix="dnsse-run-", dir=supervised)
    os.chdir(directory)
    try:
        yield directory
    finally:
        os.chdir(previous)
        shutil.rmtree(directory, ignore_errors=True)


def seed_random_generators(seed: int) -> None:
    """Seed Python's, NumPy's and torch's global generators (those already imported)."""
    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed % (2**32))
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "manual_seed"):
        torch.manual_seed(seed)
