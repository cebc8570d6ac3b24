"""How few executions unbounded dfs needs, and that its verdicts stay true.

Three shapes used to cost dfs far more executions than they have classes of
behaviour: a parameter server that takes headers from any worker (every
match was run again for each order of the sends behind it), locked lazy
initialisation, and critical sections of one lock that commute (SCTBench's
wronglock: their orders were enumerated before the race with the thread
that skips the lock). Each count below is asserted with the verdict, and the
verdicts are checked against what running every schedule shows, or against
the orders plain Python counts.
"""

from __future__ import annotations

import itertools
import json
import textwrap
from pathlib import Path

import pytest

from dnsse.engine.runner import ExecutionResult, run_execution
from dnsse.engine.target import LoadedTarget, TargetSpec
from dnsse.frameworks.base import framework_named
from dnsse.search.brute_force import all_schedules
from dnsse.search.dfs import DfsStrategy

TESTS = Path(__file__).parent
PROGRAMS = TESTS / "programs"
SCTBENCH = TESTS.parent / "benchmarks" / "sctbench_programs"


def search(spec: str, world_size: int = 2, limit: int = 5000) -> tuple[DfsStrategy, list[ExecutionResult]]:
    """dfs as ``dnsse check --strategy dfs`` runs it, until the first bug or the end of the tree."""
    target = LoadedTarget(TargetSpec.parse(spec), "auto")
    framework = framework_named(target.framework, world_size)
    strategy = DfsStrategy(lock_order_last=True)
    results: list[ExecutionResult] = []
    with framework.activate():
        while not strategy.exhausted and len(results) < limit:
            result = run_execution(target, framework, strategy.chooser_for(len(results)))
            strategy.observe(result)
            results.append(result)
            if result.bug is not None:
                break
    return strategy, results


def every_schedule(spec: str, world_size: int) -> list[ExecutionResult]:
    target = LoadedTarget(TargetSpec.parse(spec), "auto")
    framework = framework_named(target.framework, world_size)
    with framework.activate():
        return [s.result for s in all_schedules(lambda chooser: run_execution(target, framework, chooser), 5000)]


def header_orders(results: list[ExecutionResult]) -> set[tuple[int, ...]]:
    """The order in which rank 0 took its headers (every other receive names its source)."""
    return {tuple(event.fields["src"] for event in r.events if event.name == "recv")[::2] for r in results}


def orders_of(rounds: int, workers: int = 2) -> set[tuple[int, ...]]:
    """Every order of ``rounds`` headers from each worker, as plain Python counts them."""
    return set(itertools.permutations([worker for worker in range(1, workers + 1) for _ in range(rounds)]))


@pytest.mark.torch
def test_the_parameter_server_of_three_ranks_is_verified_in_under_100_executions() -> None:
    strategy, results = search(f"{PROGRAMS}/dpor_torch.py:parameter_server", world_size=3)
    assert strategy.verified() is not None
    assert all(r.bug is None for r in results)
    assert len(results) < 100
    assert header_orders(results) == orders_of(2)


@pytest.mark.torch
def test_three_rounds_of_the_parameter_server_run_each_order_of_headers_about_once() -> None:
    strategy, results = search(f"{PROGRAMS}/dpor_torch.py:parameter_server_three_rounds", world_size=3)
    assert strategy.verified() is not None
    assert header_orders(results) == orders_of(3)
    # 20 orders; the runs past them are cut short by sleep sets (a receive taking a message again).
    assert len(results) - strategy.redundant == len(orders_of(3))
    assert len(results) < 100


@pytest.mark.torch
def test_a_payload_taken_from_any_source_is_still_caught() -> None:
    strategy, results = search(f"{PROGRAMS}/dpor_torch.py:parameter_server_any_payload", world_size=3)
    assert results[-1].bug is not None
    assert "came from rank" in results[-1].bug.message


def test_locked_lazy_initialisation_is_verified_in_at_most_5_executions() -> None:
    strategy, results = search(f"{PROGRAMS}/dpor_threads.py:lazy_init")
    assert strategy.verified() is not None
    assert all(r.bug is None for r in results)
    assert len(results) <= 5


def test_wronglock_bad_is_found_in_under_100_executions() -> None:
    strategy, results = search(f"{SCTBENCH}/wronglock.py:bad")
    assert results[-1].bug is not None
    assert "another thread incremented in between" in results[-1].bug.message
    assert len(results) < 100


LOCK_ORDER_BUG = '''
import threading


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.value = 0


def write(state, value):
    with state.lock:
        state.value = value


def main():
    state = State()
    first = threading.Thread(target=write, args=(state, 1))
    second = threading.Thread(target=write, args=(state, 2))
    first.start()
    second.start()
    first.join()
    second.join()
    assert state.value == 2, "the first writer's critical section ran last"
'''

LOCKED_COUNTER = '''
import threading


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.value = 0


def add(state):
    with state.lock:
        state.value += 1


def main():
    state = State()
    first = threading.Thread(target=add, args=(state,))
    second = threading.Thread(target=add, args=(state,))
    first.start()
    second.start()
    first.join()
    second.join()
    assert state.value == 2
'''


def test_a_bug_that_needs_another_order_of_critical_sections_is_found_in_the_second_pass(tmp_path: Path) -> None:
    path = tmp_path / "lock_order.py"
    path.write_text(textwrap.dedent(LOCK_ORDER_BUG), encoding="utf-8")
    brute = {r.bug.signature() for r in every_schedule(f"{path}:main", 2) if r.bug is not None}
    strategy, results = search(f"{path}:main")
    assert brute and {results[-1].bug.signature()} == brute


def test_commuting_critical_sections_cost_no_more_than_one_pass_over_the_tree(tmp_path: Path) -> None:
    path = tmp_path / "counter.py"
    path.write_text(textwrap.dedent(LOCKED_COUNTER), encoding="utf-8")
    target = f"{path}:main"
    assert not [r for r in every_schedule(target, 2) if r.bug is not None]
    two_passes, results = search(target)
    assert two_passes.verified() is not None and all(r.bug is None for r in results)
    one_pass = DfsStrategy()
    loaded = LoadedTarget(TargetSpec.parse(target), "auto")
    framework = framework_named(loaded.framework, 2)
    with framework.activate():
        while not one_pass.exhausted:
            one_pass.observe(run_execution(loaded, framework, one_pass.chooser_for(one_pass.executions)))
    assert one_pass.verified() is not None
    assert two_passes.executions == one_pass.executions


MESSAGES = {
    "two_takes": '''
import torch
import torch.distributed as dist


def main(rank, world_size):
    if rank == 0:
        buffer = torch.zeros(1)
        first = dist.recv(buffer)
        second = dist.recv(buffer)
        assert (first, second) == (1, 2), f"took {first} then {second}"
    else:
        dist.send(torch.tensor([float(rank)]), dst=0)
''',
    "one_rank_twice": '''
import torch
import torch.distributed as dist


def main(rank, world_size):
    if rank == 0:
        buffer = torch.zeros(1)
        dist.recv(buffer)
        dist.recv(buffer)  # the third message is never taken: its sender waits forever
    elif rank == 1:
        dist.send(torch.tensor([1.0]), dst=0)
        dist.send(torch.tensor([1.0]), dst=0)
    else:
        dist.send(torch.tensor([2.0]), dst=0)
''',
}


@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(MESSAGES))
def test_dfs_sees_every_bug_that_running_every_schedule_of_a_message_passing_program_shows(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(MESSAGES[name]), encoding="utf-8")
    brute = {r.bug.signature() for r in every_schedule(f"{path}:main", 3) if r.bug is not None}
    target = LoadedTarget(TargetSpec.parse(f"{path}:main"), "auto")
    framework = framework_named(target.framework, 3)
    strategy = DfsStrategy(lock_order_last=True)
    found = set()
    with framework.activate():
        while not strategy.exhausted:
            result = run_execution(target, framework, strategy.chooser_for(strategy.executions))
            strategy.observe(result)
            if result.bug is not None:
                found.add(result.bug.signature())
    assert brute and brute <= found


def test_a_search_saved_in_its_first_pass_resumes_to_the_same_verdict(tmp_path: Path) -> None:
    path = tmp_path / "counter.py"
    path.write_text(textwrap.dedent(LOCKED_COUNTER), encoding="utf-8")
    target = LoadedTarget(TargetSpec.parse(f"{path}:main"), "auto")
    framework = framework_named(target.framework, 2)
    with framework.activate():
        whole = DfsStrategy(lock_order_last=True)
        while not whole.exhausted:
            whole.observe(run_execution(target, framework, whole.chooser_for(whole.executions)))
        first = DfsStrategy(lock_order_last=True)
        first.observe(run_execution(target, framework, first.chooser_for(0)))
        assert first.first_pass
        resumed = DfsStrategy(lock_order_last=True)
        resumed.restore(json.loads(json.dumps(first.state())))
        while not resumed.exhausted:
            resumed.observe(run_execution(target, framework, resumed.chooser_for(resumed.executions)))
    assert resumed.verified() is not None and whole.verified() is not None
    # The executions of the first pass are not saved: the second pass runs the one it reaches again.
    assert whole.executions <= resumed.executions <= whole.executions + 1
