"""The cyclic garbage collector while a campaign runs: young collections less often, old objects left out.

An execution's objects are a web of cycles (agents and the execution, their
closures, a framework's runtime, the program's own module copy), so they are
freed by the cyclic collector, not by reference counts. With CPython's
default threshold (a young collection every 700 allocations) one execution
of a Ray program meets a young collection every few scheduling points: its
live objects are traversed again and again and promoted to the older
generations, whose collections traverse them once more. A higher threshold
lets most of an execution's objects die young, and be traversed once. The
collector still runs (memory stays bounded); only its first threshold moves.
Measured on ``benchmarks/ray_speed.py``'s program: about 7% of an
execution's CPU time (README, Speed).
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator

# Young allocations between two collections of the youngest generation (CPython's default: 700).
CAMPAIGN_THRESHOLD = 10_000


@contextlib.contextmanager
def fewer_collections(threshold: int = CAMPAIGN_THRESHOLD) -> Iterator[None]:
    """Raise the youngest generation's threshold to ``threshold`` (never lower it); put it back after."""
    previous = gc.get_threshold()
    gc.set_threshold(max(threshold, previous[0]), *previous[1:])
    try:
        yield
    finally:
        gc.set_threshold(*previous)


@contextlib.contextmanager
def old_objects_frozen() -> Iterator[None]:
    """Leave every object alive now out of the collector's traversals (``gc.freeze``) until the end.

    A full collection traverses every object the collector tracks: with
    torch imported, hundreds of thousands, 100-130 ms here. What is alive
    when a campaign starts (the libraries, the program's imports) lives as
    long as it, so its full collections need only traverse what it made.
    A process that froze its heap already (a worker forked from the fork
    server, dnsse.campaign.fork_server) keeps it frozen after.
    """
    frozen_before = gc.get_freeze_count()
    gc.freeze()
    try:
        yield
    finally:
        if not frozen_before:
            gc.unfreeze()
