"""Timed waits expire when virtual time passes their deadline, or within the delay bound.

Each program's happy path passes; its timeout branch (the thing waited for is
merely slower than the timeout) raises an AssertionError naming the timed
wait. Under the default delay bound (0.1 s) none of these timeouts, all of a
second or more on a peer that answers at once, can expire: no strategy may
report them, as no real run shows them. With ``--max-delay inf`` (any agent
may be descheduled for any time) every strategy must reach that branch, dfs
after running the happy path first, so both outcomes are enumerated.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import PROGRAMS, controlled

from dnsse.engine.bugs import BugKind
from dnsse.engine.choices import ReplayChooser
from dnsse.engine.limits import Limits
from dnsse.engine.operation import is_expiry
from dnsse.search.registry import make_strategy

TIMED_WAITS = [
    ("threads_timeouts.py:slow_holder", "lock.acquire timed out"),
    ("threads_timeouts.py:slow_setter", "Event.wait timed out"),
    ("threads_timeouts.py:slow_producer", "queue.get timed out"),
    ("threads_timeouts.py:slow_consumer", "queue.put timed out"),
    ("threads_timeouts.py:slow_worker", "Thread.join timed out"),
    ("threads_timeouts.py:slow_notifier", "Condition.wait timed out"),
    ("threads_timeouts.py:slow_releaser", "Semaphore.acquire timed out"),
    ("threads_timeouts.py:slow_party", "Barrier.wait timed out"),
    ("ray_timeouts.py:slow_task_get", "ray.get timed out"),
    ("ray_timeouts.py:slow_task_wait", "ray.wait timed out"),
    ("ray_timeouts.py:slow_pool", "ActorPool.get_next timed out"),
    ("torch_timeouts.py:slow_sender", "the receive timed out: Work.wait() of irecv on rank 0 timed out after 5s"),
]
EXECUTIONS = 40
UNBOUNDED = Limits(max_delay=math.inf)


def _first_timeout(spec: str, strategy_name: str, limits: Limits) -> tuple[int, list]:
    """The execution number whose bug is the timeout branch, and every result up to it."""
    results = []
    with controlled(spec, limits=limits) as run:
        strategy = make_strategy(strategy_name, seed=0)
        for execution in range(EXECUTIONS):
            if getattr(strategy, "exhausted", False):
                break
            result = run(strategy.chooser_for(execution))
            strategy.observe(result)
            results.append(result)
            if result.bug is not None:
                return execution, results
    return -1, results


@pytest.mark.parametrize("strategy_name", ["random", "pct", "dfs"])
@pytest.mark.parametrize(("spec", "message"), TIMED_WAITS)
def test_a_timed_wait_on_a_peer_that_answers_at_once_never_times_out(spec: str, message: str, strategy_name: str) -> None:
    execution, results = _first_timeout(spec, strategy_name, Limits())
    assert execution == -1, f"{strategy_name} reported a timeout no real run shows: {results[-1].bug.render()}"
    assert not any(is_expiry(operation) for result in results for _, operation in result.history)


@pytest.mark.parametrize(
    "function", sorted({spec.split(":")[1] for spec, _ in TIMED_WAITS if spec.startswith("threads_")})
)
def test_the_threads_programs_pass_in_plain_python(function: str) -> None:
    """What the no-timeout verdict is checked against: the program run plainly, outside control."""
    done = subprocess.run(
        [sys.executable, "-c", f"import threads_timeouts; threads_timeouts.{function}()"],
        cwd=PROGRAMS, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("strategy_name", ["random", "pct", "dfs"])
@pytest.mark.parametrize(("spec", "message"), TIMED_WAITS)
def test_with_an_unbounded_delay_a_timed_wait_on_a_merely_slow_peer_can_time_out(
    spec: str, message: str, strategy_name: str
) -> None:
    execution, results = _first_timeout(spec, strategy_name, UNBOUNDED)
    assert execution >= 0, f"{strategy_name} never let the timed wait of {spec} expire"
    bug = results[-1].bug
    assert bug.kind == BugKind.EXCEPTION and message in bug.message, bug.render()
    assert any(is_expiry(operation) for _, operation in results[-1].history)
    if strategy_name == "dfs":
        assert results[0].bug is None, "dfs first runs the schedule where nothing times out"


def test_the_timeout_branch_replays() -> None:
    _, results = _first_timeout("threads_timeouts.py:slow_holder", "random", UNBOUNDED)
    with controlled("threads_timeouts.py:slow_holder", limits=UNBOUNDED) as run:
        again = run(ReplayChooser(results[-1].choices))
    assert again.divergence is None
    assert again.bug is not None and again.bug.signature() == results[-1].bug.signature()


def test_dfs_exhausts_a_program_with_a_timed_wait() -> None:
    """A timed wait whose satisfier races with its expiry is one more class, not an endless tree."""
    with controlled("threads_timeouts.py:slow_holder", limits=UNBOUNDED) as run:
        strategy = make_strategy("dfs", seed=0)
        executions = 0
        while not strategy.exhausted and executions < 50:
            strategy.observe(run(strategy.chooser_for(executions)))
            executions += 1
    assert strategy.exhausted


# Not dfs: its race analysis grows with the square of an execution's steps, and these take some 50,000.
@pytest.mark.slow
@pytest.mark.parametrize("strategy_name", ["random", "pct"])
def test_a_sync_actor_busy_forever_lets_the_drivers_get_time_out(tmp_path: Path, strategy_name: str) -> None:
    """Ray's docs: ``run`` occupies the actor's thread, so ``get_num_executed`` cannot answer.

    Every execution ends with the driver's GetTimeoutError, as in real Ray:
    the 5 s pass while ``run`` goes round its loop of actor calls (each step
    of the Ray runtime takes virtual time), not at the step limit, which fair
    scheduling would make a livelock.
    """
    done = subprocess.run(
        [
            sys.executable, "-m", "dnsse.cli", "check", f"{PROGRAMS / 'ray_timeouts.py'}:sync_actor_blocks_its_thread",
            "--strategy", strategy_name, "--budget", "5", "--out", str(tmp_path),
        ],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no bug found: 0 bugs in 5 executions" in done.stdout
