"""What finalizers print while the garbage collector runs reaches neither the terminal nor a run's output.

The garbage may be any earlier execution's, and the collector runs when
allocations say so: an asyncio future's "Future exception was never
retrieved" must not show up in the campaign's output, nor in the output of
the bug's run that happened to trigger the collection.
"""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

import pytest

from dnsse.engine.output import captured_output

PROGRAMS = Path(__file__).parent / "programs"


class _PrintsWhenCollected:
    """A cycle that only the collector frees, printing in its finalizer as asyncio's futures log."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        print("finalizer output", file=sys.stderr)


def test_a_finalizer_run_by_the_collector_between_executions_prints_nothing(capsys: pytest.CaptureFixture) -> None:
    with captured_output():
        _PrintsWhenCollected()
    gc.collect()
    assert "finalizer output" not in capsys.readouterr().err


def test_a_finalizer_run_by_the_collector_during_an_execution_is_not_its_output() -> None:
    _PrintsWhenCollected()
    with captured_output() as output:
        print("the program's own line")
        gc.collect()
    assert [line for _, _, line in output.lines()] == ["the program's own line"]


def test_a_campaign_shows_no_future_exception_of_other_runs(tmp_path: Path) -> None:
    found = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", f"{PROGRAMS}/story_finalizer_output.py:main", "--strategy",
         "random", "--budget", "200", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )
    assert found.returncode == 1, found.stdout + found.stderr
    assert "lost update: n is 1" in found.stdout
    assert "never retrieved" not in found.stdout + found.stderr
    replayed = subprocess.run([sys.executable, "-m", "dnsse.cli", "replay", str(tmp_path / "bug-1.json")],
                              capture_output=True, text=True, timeout=600)
    assert replayed.returncode == 1 and "never retrieved" not in replayed.stdout + replayed.stderr
