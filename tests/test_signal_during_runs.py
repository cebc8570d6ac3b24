"""A signal that arrives while a program runs under control never stalls its execution.

On CPython 3.11 a signal the main thread has not handled yet makes a traced
thread spin at its next call (dnsse.engine.run_wait). The main thread waits
for each run; if it sleeps through the signal, the run stalls until its
wall-clock limit and counts as inconclusive. In 200 runs of a program that
signals itself in each, that happened within the first few dozen before the
main thread woke in slices.
"""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import pytest

from dnsse.engine.limits import Limits
from dnsse.campaign.config import CampaignConfig
from dnsse.campaign.run import run_campaign

PROGRAM = Path(__file__).parent / "programs" / "signalled.py"


@pytest.fixture
def counted_sigusr1() -> list[int]:
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers can be set only from the main thread")
    received: list[int] = []
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: received.append(signum))
    yield received
    signal.signal(signal.SIGUSR1, previous)


def test_a_program_that_signals_itself_in_every_run_runs_every_execution_to_its_end(
    counted_sigusr1: list[int], tmp_path: Path
) -> None:
    config = CampaignConfig(
        target=f"{PROGRAM}:main", strategy="random", budget=200, seed=0, out=tmp_path, minimize=False,
        # Far above what a run takes however loaded the machine: a stalled run still reaches it and fails the test.
        limits=Limits(max_seconds=30.0),
    )
    result = run_campaign(config)
    assert result.inconclusive == [] and result.bugs == []
    assert result.executions == 200
    # Each run's signals reached the handler (two sent at once may arrive as one).
    assert len(counted_sigusr1) >= 200
