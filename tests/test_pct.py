"""PCT keeps its probabilistic bound: spinning agents are caught, long-running ones are left alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import PROGRAMS, controlled

from dnsse.engine.operation import CLOCK, Access, Operation
from dnsse.search.pct import PctStrategy
from dnsse.engine.spin_watch import SpinWatch

READ_FLAG = Operation("attr.load", (("attr:ready", Access.READ),), "prog.py:9")
WRITE_FLAG = Operation("attr.store", (("attr:ready", Access.WRITE),), "prog.py:4")
SLEEP = Operation("sleep", ((CLOCK, Access.WRITE),), "sleep(0.1)")


def test_an_agent_repeating_a_read_with_no_write_anywhere_spins() -> None:
    watch = SpinWatch()
    history = [(1, READ_FLAG), (1, SLEEP), (1, READ_FLAG), (1, SLEEP)]
    watch.follow(history)
    assert watch.spinning(1, READ_FLAG)  # a third time, and only the clock moved
    assert not watch.spinning(2, READ_FLAG)  # another agent never did it


def test_a_write_by_anyone_in_between_is_progress() -> None:
    watch = SpinWatch()
    watch.follow([(1, READ_FLAG), (1, READ_FLAG), (2, WRITE_FLAG)])
    assert not watch.spinning(1, READ_FLAG)


def test_one_line_may_perform_an_operation_twice_without_spinning() -> None:
    history = [(1, READ_FLAG)]
    watch = SpinWatch()
    watch.follow(history)
    assert not watch.spinning(1, READ_FLAG)
    history.append((1, READ_FLAG))
    watch.follow(history)
    assert watch.spinning(1, READ_FLAG)  # a third time, one step apart again: a try-again loop


def test_an_agent_using_one_lock_three_times_at_different_places_does_not_spin() -> None:
    take = Operation("lock.acquire", (("lock#1", Access.SYNC),), "Lock#1")
    give = Operation("lock.release", (("lock#1", Access.SYNC),), "Lock#1")
    start = Operation("thread.start", (("thread#1", Access.SYNC),), "Thread-1")
    watch = SpinWatch()
    watch.follow([(0, take), (0, give), (0, start), (0, take), (0, give)])
    assert not watch.spinning(0, take)  # two steps since the last take, three before


def test_a_loop_that_touches_other_objects_each_round_makes_progress() -> None:
    """``for t in threads: t.start()``: the same line, but each round starts another thread."""
    def start(n: int) -> Operation:
        return Operation("thread.start", ((f"thread#{n}", Access.SYNC),), "Thread")

    advance = Operation("iterate", (("o3", Access.READ),), "prog.py:30")
    watch = SpinWatch()
    watch.follow([(0, advance), (0, start(1)), (0, advance), (0, start(2))])
    assert not watch.spinning(0, advance)
    assert not watch.spinning(0, start(3))


def test_a_loop_over_two_flags_on_one_line_spins() -> None:
    """``while not (a.ready and b.ready): pass``: two loads on one line per round, the same each round."""
    first = Operation("attr.load", (("o1.ready", Access.READ),), "prog.py:9")
    second = Operation("attr.load", (("o2.ready", Access.READ),), "prog.py:9")
    watch = SpinWatch()
    watch.follow([(1, first), (1, second), (1, first)])
    assert not watch.spinning(1, second)
    watch.follow([(1, first), (1, second), (1, first), (1, second)])
    assert watch.spinning(1, first)


def test_what_a_step_was_found_to_write_as_it_ran_is_progress() -> None:
    """The history holds a step's footprint as it ran: a call announced as a read that wrote counts."""
    call = Operation("call", (("o4", Access.READ),), "prog.py:12")
    wrote = call.touching((("o4", Access.WRITE),))
    watch = SpinWatch()
    watch.follow([(1, call), (1, wrote), (1, call)])
    assert not watch.spinning(1, call)
    watch.follow([(1, call), (1, wrote), (1, call), (1, call)])
    assert watch.spinning(1, call)  # twice round since the write, nothing written


def _campaign(spec: str, depth: int, executions: int, seed: int = 0) -> tuple[PctStrategy, list]:
    strategy = PctStrategy(seed=seed, depth=depth)
    results = []
    with controlled(spec) as run:
        for index in range(executions):
            result = run(strategy.chooser_for(index))
            strategy.observe(result)
            results.append(result)
    return strategy, results


def test_a_spinning_correct_program_gets_no_report_and_the_spins_are_counted() -> None:
    strategy, results = _campaign("threads_spin.py:main", depth=3, executions=30)
    assert [r.bug.render() for r in results if r.bug is not None] == []
    # The consumer got the higher priority in some runs and spun: caught, not run to the step limit.
    assert strategy.notes()["spinning_agents_dropped"] > 0
    assert max(r.steps for r in results) < 100


@pytest.mark.parametrize(
    ("spec", "depth", "executions"),
    [("pct_long_rank.py:late_reader", 1, 40), ("pct_long_rank.py:torn_read", 2, 30)],
)
def test_a_bug_behind_a_long_running_agent_is_found_at_least_as_often_as_the_bound(
    spec: str, depth: int, executions: int
) -> None:
    """Hit rate >= 1 / (n * k ** (d - 1)) with n agents and k scheduling choices.

    The worker's 600-iteration loop runs more than a thousand scheduling
    choices before the racy part, which the old starvation guard turned into
    a uniform random schedule. It writes every iteration, and the main
    thread starts and joins a different thread each round of its loops: no
    agent of this program spins, so none is ever dropped.
    """
    strategy, results = _campaign(spec, depth, executions)
    agents = max(len(r.agent_names) for r in results)
    choices = max(sum(1 for c in r.choices if c.kind == "agent") for r in results)
    assert choices > 1000, "the long-running agent makes the run long"
    hits = sum(1 for r in results if r.bug is not None and "AssertionError" in r.bug.message)
    bound = 1 / (agents * choices ** (depth - 1))
    assert hits / executions >= bound, f"{hits}/{executions} below the PCT bound {bound:.5f}"
    assert strategy.notes() == {"spinning_agents_dropped": 0, "executions_with_spinning": 0}


def test_the_cli_reports_how_often_pct_caught_spinning(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = subprocess.run(
        [
            sys.executable, "-m", "dnsse.cli", "check", f"{PROGRAMS / 'threads_spin.py'}:main",
            "--strategy", "pct",
            "--budget", "20", "--out", str(tmp_path), "--json", str(report),
        ],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    search = json.loads(report.read_text())["search"]
    assert search["spinning_agents_dropped"] >= search["executions_with_spinning"] > 0
    assert f"pct caught an agent spinning {search['spinning_agents_dropped']} times" in done.stdout
