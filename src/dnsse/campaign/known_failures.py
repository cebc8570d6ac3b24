"""Known failures: a campaign first replays the bugs earlier campaigns of its target found.

As Hypothesis keeps an example database and tries its examples before
generating new ones, ``dnsse check`` keeps each bug's trace under
``OUT/known/`` (``.dnsse/known/`` by default), one file per bug family and
target, and the next campaign of the same target replays them before it
explores: a bug not fixed yet is reported again at once (execution 0, no
search), and a trace that no longer shows its bug (the fix worked, or the
program changed so that the schedule no longer fits) is dropped from the
database. Crashes, hangs and exhausted memory are not kept: replaying them
would kill the process or wait out the wall clock. ``--no-db`` turns it off. A resumed campaign does not replay them
again: it continues where it stopped.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from dnsse.engine.bugs import BugKind
from dnsse.engine.memory import is_exhausted
from dnsse.errors import BadInput
from dnsse.campaign.confirm import unreproduced
from dnsse.campaign.trace import read_trace
from dnsse.search.bug_family import bug_family

from dnsse.campaign.config import FoundBug, KnownFailures

if TYPE_CHECKING:
    from dnsse.campaign.campaign import Campaign

# The most traces of one target replayed before a campaign explores (the newest first).
MOST_REPLAYED = 20
DIRECTORY = "known"


def database_of(campaign: Campaign) -> Path:
    """The directory of the known failures of this campaign's target (its framework and world size alike)."""
    config = campaign.config
    key = json.dumps([str(campaign.target.spec), campaign.framework.name, config.world_size])
    return config.out / DIRECTORY / hashlib.sha256(key.encode()).hexdigest()[:16]


def replay_known(campaign: Campaign) -> KnownFailures:
    """Replay the known failures of ``campaign``'s target; those that still fail are recorded as its bugs.

    The framework must be active. A replayed bug is recorded as found in
    execution 0, with its trace written and confirmed as any bug's is.
    """
    known = KnownFailures()
    database = database_of(campaign)
    if not database.is_dir():
        return known
    paths = sorted(database.glob("*.json"), key=lambda path: path.stat().st_mtime, reverse=True)
    for path in paths[:MOST_REPLAYED]:
        known.replayed += 1
        try:
            trace = read_trace(path)
        except BadInput:
            path.unlink(missing_ok=True)
            known.dropped += 1
            continue
        result = campaign.follow(trace, 0)
        if unreproduced(trace, result) is not None:
            path.unlink(missing_ok=True)
            known.dropped += 1
            continue
        known.still_failing += 1
        path.touch()
        campaign.record(result, 0, shrink=False)
    return known


def remember(campaign: Campaign, found: list[FoundBug]) -> None:
    """Keep the trace of each bug ``found`` in the database, one per bug family (the latest)."""
    if not found:
        return
    database = database_of(campaign)
    for bug in found:
        # A crash or exhausted memory would kill the process that replays it, and a hang waits out the
        # wall-clock limit: none is cheap to try before a search, so none is kept.
        if not bug.trace_path.exists() or bug.bug.kind in (BugKind.CRASH, BugKind.HANG) or is_exhausted(bug.bug):
            continue
        family = hashlib.sha256(json.dumps(bug_family(bug.bug)).encode()).hexdigest()[:16]
        database.mkdir(parents=True, exist_ok=True)
        shutil.copy(bug.trace_path, database / f"{family}.json")  # with its mode: readable by others, as traces are
