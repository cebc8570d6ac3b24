"""Busy-waiting programs get true verdicts: no false timeout from any strategy, and the real bug found.

A poller (``while not ready: pass``) never blocks, so a chooser that lets the
current agent go on when its plan runs out would run it forever and report
a correct program as a ``timeout``. Every chooser that finishes a run after
a plan lets a spinning agent yield (:mod:`dnsse.search.finish`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import PROGRAMS, controlled

from dnsse.engine.choices import FirstChooser
from dnsse.engine.operation import Access, Operation
from dnsse.search.minimize import ShrinkingChooser
from dnsse.search.planned import PlannedChooser
from dnsse.search.finish import Finish

STRATEGIES = ["random", "pct", "pos", "dfs", "fuzz", "symbolic", "llm", "hybrid"]
CORRECT = ["threads_spin.py:main", "threads_busy_wait.py:attribute_flag", "threads_busy_wait.py:sleep_poll"]
BUGGY = "threads_busy_wait.py:published_too_early"
# dfs runs one execution per race of every poll with the write it waits for: fewer make the point.
BUDGET = {"dfs": 40}


def _cli(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dnsse.cli", *arguments], capture_output=True, text=True, timeout=600
    )


def _check(spec: str, strategy: str, out: Path, budget: int) -> tuple[subprocess.CompletedProcess, dict]:
    report = out / "report.json"
    done = _cli(
        "check", str(PROGRAMS / spec), "--strategy", strategy, "--budget", str(budget),
        "--max-steps", "3000", "--out", str(out), "--json", str(report),
    )
    return done, json.loads(report.read_text())


def test_a_spinning_agent_yields_to_one_that_can_make_progress() -> None:
    poll = Operation("item.load", (("o1", Access.READ),), "prog.py:10")
    store = Operation("item.store", (("o1", Access.WRITE),), "prog.py:5")
    finish = Finish(FirstChooser())
    history = [(1, poll), (1, poll)]
    finish.follow(history)
    # Agent 1 would go round its loop a third time with nothing written: agent 2 goes first.
    assert finish.next_agent([1, 2], 1, 3, [poll, store]) == 1
    history.append((2, store))
    finish.follow(history)
    assert finish.next_agent([1, 2], 1, 4, [poll, store]) == 0  # something was written: it may look again


@pytest.mark.parametrize(
    "chooser",
    [lambda: PlannedChooser([], FirstChooser()), lambda: ShrinkingChooser([])],
    ids=["a plan finished without preempting", "minimization's default schedule"],
)
def test_finishing_a_run_without_preempting_ends_a_correct_spin_wait(chooser) -> None:  # type: ignore[no-untyped-def]
    with controlled("threads_spin.py:main") as run:
        result = run(chooser())
    assert result.bug is None, result.bug.render()
    assert result.steps < 100


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("spec", CORRECT)
def test_a_correct_busy_wait_gets_no_bug_from_any_strategy(spec: str, strategy: str, tmp_path: Path) -> None:
    done, report = _check(spec, strategy, tmp_path, budget=BUDGET.get(strategy, 100))
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["bugs"] == []
    assert not list(tmp_path.glob("bug-*.json"))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_value_published_after_its_flag_is_found_and_its_minimized_trace_replays(
    strategy: str, tmp_path: Path
) -> None:
    done, report = _check(BUGGY, strategy, tmp_path, budget=300)
    assert done.returncode == 1, done.stdout + done.stderr
    (bug,) = report["bugs"]
    assert bug["kind"] == "exception"
    assert "the consumer read the value before it was set" in bug["message"]
    replayed = _cli("replay", bug["trace"])
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "the consumer read the value before it was set" in replayed.stdout
