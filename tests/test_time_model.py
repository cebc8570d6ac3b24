"""Time, delay bounds and fairness as real runs have them (dnsse.engine.clock, .fairness, .livelock).

Each correct program here passes in every real run (checked by running it
plainly, or under real Ray in the marked test) and must pass under every
strategy; each buggy one must be found, with a story that says what time did.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Sequence

import pytest
from helpers import PROGRAMS, SeededChooser, controlled

from dnsse.engine.bugs import BugKind
from dnsse.engine.limits import Limits
from dnsse.engine.livelock import SPIN_STEPS
from dnsse.engine.operation import is_expiry
from dnsse.search.registry import make_strategy

STRATEGIES = ["random", "pct", "pos", "dfs"]
CORRECT_THREADS = [
    "timeout_on_an_item_put_at_once",
    "a_sleep_orders_two_threads",
    "a_spinner_stopped_after_a_sleep",
    "dates_follow_the_clock",
]
CORRECT_ASYNCIO = [
    "a_created_task_runs_at_the_next_sleep_zero",
    "gathered_coroutines_start_in_creation_order",
    "a_batcher_awaited_with_wait_for",
    "an_engine_loop_with_a_step_timeout",
]
# The async actor's loop runs on after its program: last, so that it slows no other under real Ray.
CORRECT_RAY = [
    "get_with_a_timeout",
    "actor_pool_get_next_with_a_timeout",
    "worker_group_meets_at_a_polling_barrier",
    "async_actor_serves_while_run_loops",
]


def _campaign(spec: str, strategy_name: str, executions: int, limits: Limits | None = None) -> list:
    results = []
    with controlled(spec, limits=limits) as run:
        strategy = make_strategy(strategy_name, seed=0)
        for execution in range(executions):
            if getattr(strategy, "exhausted", False):
                break
            result = run(strategy.chooser_for(execution))
            strategy.observe(result)
            results.append(result)
    return results


def _plain(module: str, function: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", f"import {module}; {module}.{function}()"],
        cwd=PROGRAMS, capture_output=True, text=True, timeout=600,
    )


def test_dates_named_while_the_clock_was_virtual_read_the_real_clock_after_it() -> None:
    # A module imported during an execution keeps what `from datetime import datetime` gave it then.
    import datetime

    with controlled("time_threads.py:dates_follow_the_clock") as run:
        assert run(SeededChooser(0)).bug is None
        named_then = (datetime.datetime, datetime.date)
    assert named_then[0] is not datetime.datetime  # the subclasses, still in the hands of whoever took them
    before = datetime.datetime.now(datetime.timezone.utc)
    now = named_then[0].now(datetime.timezone.utc)
    assert before <= now <= datetime.datetime.now(datetime.timezone.utc)
    assert named_then[0].now().tzinfo is None and named_then[0].utcnow().tzinfo is None
    assert named_then[1].today() in (before.astimezone().date(), datetime.date.today())


@pytest.mark.parametrize("strategy_name", STRATEGIES)
@pytest.mark.parametrize("function", CORRECT_THREADS + CORRECT_ASYNCIO)
def test_a_program_that_passes_in_every_real_run_passes_under_every_strategy(function: str, strategy_name: str) -> None:
    module = "time_threads" if function in CORRECT_THREADS else "time_asyncio"
    results = _campaign(f"{module}.py:{function}", strategy_name, 15)
    bugs = [result.bug.render() for result in results if result.bug is not None]
    assert not bugs, bugs[0]
    assert all(result.divergence is None and result.inconclusive is None for result in results)


@pytest.mark.parametrize("function", CORRECT_THREADS + CORRECT_ASYNCIO)
def test_the_correct_programs_pass_in_plain_python(function: str) -> None:
    module = "time_threads" if function in CORRECT_THREADS else "time_asyncio"
    done = _plain(module, function)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("strategy_name", ["random", "pct", "pos"])
@pytest.mark.parametrize("function", CORRECT_RAY)
def test_ray_documentation_patterns_with_timeouts_and_polling_pass(function: str, strategy_name: str) -> None:
    results = _campaign(f"time_ray.py:{function}", strategy_name, 6)
    bugs = [result.bug.render() for result in results if result.bug is not None]
    assert not bugs, bugs[0]


@pytest.mark.slow
@pytest.mark.ray
def test_the_ray_patterns_pass_under_real_ray() -> None:
    pytest.importorskip("ray")
    done = subprocess.run(
        [sys.executable, "time_ray.py", *CORRECT_RAY], cwd=PROGRAMS, capture_output=True, text=True, timeout=600,
    )
    if "passed" not in done.stdout and done.returncode != 0 and "ray" in done.stderr.lower() and "init" in done.stderr:
        pytest.skip(f"real Ray could not start here: {done.stderr[-300:]}")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [line for line in done.stdout.splitlines() if line.startswith("passed: ")] == [
        f"passed: {name}" for name in CORRECT_RAY
    ]


@pytest.mark.parametrize("strategy_name", STRATEGIES)
def test_a_producer_that_sleeps_past_the_timeout_always_makes_it_expire(strategy_name: str) -> None:
    results = _campaign("time_threads.py:a_producer_slower_than_the_timeout", strategy_name, 3)
    assert all(result.bug is not None and result.bug.kind == BugKind.EXCEPTION for result in results)
    assert all("Empty" in result.bug.message for result in results)
    assert all(not result.stalls for result in results), "the clock got to the deadline by itself: no stall"
    assert _plain("time_threads", "a_producer_slower_than_the_timeout").returncode == 1


def test_a_timeout_within_the_delay_bound_is_explored_both_ways() -> None:
    spec = "time_threads.py:a_timeout_shorter_than_the_delay_bound"
    with controlled(spec) as run:
        results = [run(SeededChooser(seed)) for seed in range(30)]
    failed = [result for result in results if result.bug is not None]
    assert failed and len(failed) < len(results)
    for result in failed:
        [stall] = result.stalls
        assert stall.seconds == pytest.approx(0.05, abs=1e-3)
        assert any(is_expiry(operation) for _, operation in result.history)


def test_with_no_delay_allowed_the_short_timeout_never_expires() -> None:
    with controlled("time_threads.py:a_timeout_shorter_than_the_delay_bound", limits=Limits(max_delay=0.0)) as run:
        results = [run(SeededChooser(seed)) for seed in range(30)]
    assert all(result.bug is None and not result.stalls for result in results)


def test_no_stall_exceeds_the_bound_it_was_found_under() -> None:
    for bound in (0.0, 0.03, 0.1, math.inf):
        with controlled("time_threads.py:a_timeout_shorter_than_the_delay_bound", limits=Limits(max_delay=bound)) as run:
            for seed in range(20):
                result = run(SeededChooser(seed))
                assert sum(stall.seconds for stall in result.stalls) <= bound + 1e-9


class NewestAgentAlways:
    """A strategy that always runs the newest agent that can run: it starves every older one it can."""

    def next_agent(self, runnable: Sequence[int], current: int | None, step: int) -> int:
        return len(runnable) - 1

    def next_value(self, kind: str, options: int) -> int:
        return 0


def test_after_the_unfair_prefix_a_starved_agent_gets_its_turn() -> None:
    limits = Limits(unfair_steps=500)
    with controlled("time_threads.py:a_spinner_that_runs_first", limits=limits) as run:
        result = run(NewestAgentAlways())
    assert result.bug is None, result.bug.render()
    assert 500 < result.steps < 2_000


def test_without_fairness_the_same_starvation_runs_into_the_step_limit() -> None:
    limits = Limits(unfair_steps=10**9, max_steps=3_000)
    with controlled("time_threads.py:a_spinner_that_runs_first", limits=limits) as run:
        result = run(NewestAgentAlways())
    assert result.bug is not None and result.bug.kind == BugKind.TIMEOUT


@pytest.mark.parametrize("strategy_name", ["random", "pct", "dfs"])
def test_a_real_livelock_is_reported_early_with_who_kept_running(strategy_name: str) -> None:
    [result] = _campaign("time_threads.py:a_try_lock_livelock", strategy_name, 1)
    assert result.bug is not None and result.bug.kind == BugKind.TIMEOUT
    assert "livelock" in result.bug.message and "fair scheduling" in result.bug.message
    assert result.steps <= Limits.unfair_steps + SPIN_STEPS + 10
    details = "\n".join(result.bug.details)
    assert "Thread-1 (spinner) kept running" in details and "time_threads.py:78 in spinner" in details
    assert "main took none of them: it waits for Event#1" in details


@pytest.mark.parametrize("strategy_name", ["random", "pct", "pos"])
def test_a_check_then_act_across_an_await_is_still_found(strategy_name: str) -> None:
    results = _campaign("time_asyncio.py:two_tasks_fetch_the_same_key", strategy_name, 5)
    assert results[0].bug is not None and "AssertionError" in results[0].bug.message
    assert _plain("time_asyncio", "two_tasks_fetch_the_same_key").returncode == 1


def test_the_story_says_which_timeout_expired_and_the_stall(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", f"{PROGRAMS / 'time_threads.py'}:a_timeout_shorter_than_the_delay_bound",
         "--strategy", "random", "--budget", "200", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "time: the agents that could run were stalled 0.05s here (of the 0.1s --max-delay)" in done.stdout
    assert "0.05s timeout of condition.wakeup" in done.stdout and "expired at t=0.05" in done.stdout
    trace = json.loads((tmp_path / "bug-1.json").read_text())
    assert trace["limits"]["max_delay"] == 0.1
    assert [round(stall["seconds"], 3) for stall in trace["stalls"]] == [0.05]


def test_max_delay_inf_is_recorded_and_bad_values_are_refused(tmp_path: Path) -> None:
    program = f"{PROGRAMS / 'time_threads.py'}:timeout_on_an_item_put_at_once"
    done = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", program, "--max-delay", "inf", "--strategy", "random",
         "--budget", "100", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert json.loads((tmp_path / "bug-1.json").read_text())["limits"]["max_delay"] == "inf"
    replayed = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "replay", str(tmp_path / "bug-1.json")],
        capture_output=True, text=True, timeout=600,
    )
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    for bad in ("-1", "soon"):
        refused = subprocess.run(
            [sys.executable, "-m", "dnsse.cli", "check", program, "--max-delay", bad],
            capture_output=True, text=True, timeout=600,
        )
        assert refused.returncode == 2 and "--max-delay" in refused.stderr and "Traceback" not in refused.stderr


def test_the_suites_check_of_every_trace_sees_a_stall_over_its_bound(tmp_path: Path) -> None:
    from conftest import stalls_beyond_their_bound

    trace = {"format": "dnsse-trace", "limits": {"max_delay": 0.1}, "stalls": [{"seconds": 0.08}, {"seconds": 0.05}]}
    (tmp_path / "bug-1.json").write_text(json.dumps(trace))
    (tmp_path / "bug-2.json").write_text(json.dumps({**trace, "stalls": [{"seconds": 0.1}]}))
    try:
        [beyond] = stalls_beyond_their_bound(tmp_path)
    finally:
        for path in tmp_path.glob("bug-*.json"):
            path.unlink()  # not a trace dnsse wrote: the session's own check must not see it
    assert "bug-1.json" in beyond and "0.13s" in beyond
