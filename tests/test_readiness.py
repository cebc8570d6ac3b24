"""The agents offered at each step are kept up to date, not found by testing every wait (dnsse.engine.readiness).

A rank that blocks on a collective or a send sleeps, untested, until the
step that completes it fires its signal. A lost wake-up would turn into a
false deadlock, or into a schedule that differs from the one testing every
wait would give: every program here must give the same choices, steps and
bugs both ways over many seeds, and a deadlock only where there is one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dnsse.engine import readiness
from dnsse.engine.agent import Signal, ThreadAgent, Wait, current_agent
from dnsse.engine.bugs import BugKind
from dnsse.engine.choices import FirstChooser
from dnsse.engine.execution import Execution, Limits
from dnsse.engine.operation import Operation
from dnsse.engine.runner import ExecutionResult, run_execution
from dnsse.engine.target import LoadedTarget, TargetSpec
from dnsse.search.registry import make_strategy
from helpers import PROGRAMS

RANKS_PROGRAM = Path(__file__).parent.parent / "benchmarks" / "speed" / "ranks_program.py"


def _outcomes(spec: str, world_size: int, strategy: str, executions: int, check_standings: bool) -> list[tuple]:
    from dnsse.frameworks.torch_dist.framework import TorchFramework

    target = LoadedTarget(TargetSpec.parse(spec))
    framework = TorchFramework(world_size)
    search = make_strategy(strategy, 5)
    outcomes = []
    with framework.activate():
        for index in range(executions):
            if getattr(search, "exhausted", False):
                break
            result = run_execution(target, framework, search.chooser_for(index), monitors=[_Standings()] if check_standings else ())
            search.observe(result)
            outcomes.append(_outcome(result))
    return outcomes


def _outcome(result: ExecutionResult) -> tuple:
    bug = None if result.bug is None else (result.bug.kind, result.bug.message)
    return bug, result.steps, [choice.to_json() for choice in result.choices], result.divergence


class _Standings:
    """At every step: no sleeper could run, and every agent counted able to run can."""

    def attach(self, execution: Execution):  # type: ignore[no-untyped-def]
        def check(chosen: object, operation: Operation) -> None:
            table = execution.readiness
            for agent in execution.active:
                wait = agent.waiting
                if agent.standing == readiness.ASLEEP:
                    assert not wait.ready() and not wait.signal.fired, agent  # type: ignore[union-attr]
                    assert agent in wait.signal.sleepers, agent  # type: ignore[union-attr]
                    assert agent.id not in table.enabled
                elif agent.standing == readiness.ENABLED:
                    assert wait is None or wait.ready(), agent
                    assert agent.id in table.enabled
                else:
                    assert agent in table.scanned, agent
            assert table.enabled == sorted(table.enabled)

        execution.step_observers.append(check)
        return lambda: None


CASES = [
    (f"{PROGRAMS}/torch_wake_ups.py:relay", 4),
    (f"{PROGRAMS}/torch_wake_ups.py:early_and_late", 3),
    (f"{PROGRAMS}/torch_wake_ups.py:send_then_barrier", 3),
    (f"{PROGRAMS}/torch_deadlocks.py:collective_vs_recv", 2),
    (f"{PROGRAMS}/torch_p2p.py:batched_ring", 4),
    (f"{RANKS_PROGRAM}:main", 8),
]


@pytest.mark.torch
@pytest.mark.parametrize("spec,world_size", CASES, ids=[case[0].rsplit("/", 1)[1] for case in CASES])
@pytest.mark.parametrize("strategy", ["random", "pct", "dfs"])
def test_the_same_choices_steps_and_bugs_as_testing_every_wait(
    spec: str, world_size: int, strategy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = _outcomes(spec, world_size, strategy, 30, check_standings=True)
    monkeypatch.setattr(readiness, "INCREMENTAL", False)
    tested = _outcomes(spec, world_size, strategy, 30, check_standings=False)
    assert kept == tested


@pytest.mark.torch
def test_sleepers_are_woken_and_deadlocks_are_still_found() -> None:
    relay = _outcomes(f"{PROGRAMS}/torch_wake_ups.py:relay", 4, "random", 40, check_standings=True)
    assert all(bug is None for bug, *_ in relay)
    stuck = _outcomes(f"{PROGRAMS}/torch_wake_ups.py:send_then_barrier", 3, "random", 20, check_standings=True)
    for bug, *_ in stuck:
        assert bug is not None and bug[0] == BugKind.DEADLOCK, bug


def _run(*bodies: object) -> Execution:
    execution = Execution(FirstChooser(), Limits(max_seconds=60))
    for index, body in enumerate(bodies):
        ThreadAgent(execution, f"agent {index}", body)  # type: ignore[arg-type]
    execution.run()
    return execution


def test_a_wait_made_ready_without_its_signal_firing_is_no_deadlock() -> None:
    """A broken promise (ready turned true, the signal never fired) is caught before a deadlock is reported."""
    flag = [False]
    never = Signal()

    def waiter() -> None:
        execution = current_agent().execution  # type: ignore[union-attr]
        assert execution.block(current_agent(), Wait(lambda: flag[0], lambda: "the flag", signal=never), Operation("wait"))  # type: ignore[arg-type]

    def setter() -> None:
        execution = current_agent().execution  # type: ignore[union-attr]
        execution.yield_point(current_agent(), Operation("set"))  # type: ignore[arg-type]
        flag[0] = True

    execution = _run(waiter, setter)
    assert execution.bug is None and execution.completed


def test_a_signal_fired_wakes_its_sleepers_in_their_order() -> None:
    signal = Signal()
    order: list[str] = []

    def sleeper(name: str):  # type: ignore[no-untyped-def]
        def body() -> None:
            agent = current_agent()
            agent.execution.block(agent, Wait(lambda: signal.fired, lambda: "the signal", signal=signal), Operation("wait"))  # type: ignore[union-attr]
            order.append(name)

        return body

    def firer() -> None:
        agent = current_agent()
        agent.execution.yield_point(agent, Operation("fire"))  # type: ignore[union-attr, arg-type]
        assert agent.execution.readiness.enabled == [agent.id]  # type: ignore[union-attr]
        signal.fire()

    execution = _run(sleeper("a"), sleeper("b"), firer)
    assert execution.bug is None and execution.completed
    assert order == ["a", "b"]


def test_a_signal_that_never_fires_is_a_deadlock() -> None:
    never = Signal()

    def waiter() -> None:
        agent = current_agent()
        agent.execution.block(agent, Wait(lambda: False, lambda: "a signal that never fires", signal=never), Operation("wait"))  # type: ignore[union-attr]

    execution = _run(waiter, waiter)
    assert execution.bug is not None and execution.bug.kind == BugKind.DEADLOCK
    assert "a signal that never fires" in "\n".join(execution.bug.details)
