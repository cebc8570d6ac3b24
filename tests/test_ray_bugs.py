"""The Ray framework finds the classic Ray bugs, and stays quiet on their correct versions."""

from __future__ import annotations

import pytest
from helpers import run_ray

from dnsse.engine.bugs import BugKind
from dnsse.engine.choices import ChoiceKind


def bugs(spec: str, seeds: int = 20, faults: bool = True) -> list:
    return [r.bug for r in run_ray(spec, seeds=range(seeds), faults=faults) if r.bug is not None]


def test_async_parameter_server_loses_an_update_across_an_await() -> None:
    found = bugs("ray_param_server.py:lost_update")
    assert found and {b.message for b in found} == {"AssertionError: lost update: weights are 2, expected 4"}


@pytest.mark.parametrize("driver", ["atomic_update", "locked_update", "gather_results"])
def test_async_parameter_server_without_the_race_never_reports(driver: str) -> None:
    assert bugs(f"ray_param_server.py:{driver}") == []


def test_two_synchronous_actors_calling_each_other_deadlock() -> None:
    found = bugs("ray_mutual.py:deadlock", seeds=3)
    assert len(found) == 3
    bug = found[0]
    assert bug.kind == BugKind.DEADLOCK
    assert bug.message == "every live agent is blocked (Ping#1.ack, Ping#1.start, Pong#1.pong, driver)"
    report = "\n".join(bug.details)
    assert "Ping#1.start#1 waits for ray.get of ObjectRef#2 (Pong#1.pong#2) at" in report
    assert "Pong#1.pong#2 waits for ray.get of ObjectRef#3 (Ping#1.ack#3) at" in report
    assert "Ping#1.ack#3 waits for Ping#1 to finish Ping#1.start#1 (a synchronous actor runs one call at a time)" in (
        report
    )


def test_an_async_actor_calling_back_does_not_deadlock() -> None:
    assert bugs("ray_mutual.py:no_deadlock") == []


def test_check_then_act_in_a_threaded_actor_oversells() -> None:
    found = bugs("ray_threaded.py:oversold")
    assert found and all(b.message.startswith("AssertionError: oversold: granted [True, True]") for b in found)


def test_threaded_actor_under_a_lock_never_oversells() -> None:
    assert bugs("ray_threaded.py:guarded", seeds=30) == []


def test_a_retried_non_idempotent_method_pays_twice() -> None:
    found = bugs("ray_retries.py:double_payment")
    assert found and {b.message for b in found} == {"AssertionError: paid 20, expected 10"}


def test_a_retried_task_pays_twice() -> None:
    found = bugs("ray_retries.py:double_payment_by_task")
    assert found and {b.message for b in found} == {"AssertionError: paid 20, expected 10"}


def test_an_idempotent_method_under_retries_never_reports() -> None:
    assert bugs("ray_retries.py:idempotent_payment", seeds=30) == []


def test_a_restarted_actor_has_lost_its_state() -> None:
    messages = {b.message for b in bugs("ray_retries.py:restart_loses_state", seeds=40)}
    assert messages == {"AssertionError: state lost: 1 values after two adds"}


def test_with_faults_off_no_fault_is_chosen_and_nothing_is_retried() -> None:
    results = run_ray("ray_retries.py:double_payment", seeds=range(20), faults=False)
    assert all(r.bug is None for r in results)
    assert all(c.kind != ChoiceKind.FAULT for r in results for c in r.choices)


def test_faults_are_injected_only_where_the_program_declares_them() -> None:
    results = run_ray("ray_param_server.py:lost_update", seeds=range(10))
    assert all(c.kind != ChoiceKind.FAULT for r in results for c in r.choices)


def test_an_actor_pool_starved_by_calls_waiting_on_held_back_calls_deadlocks() -> None:
    found = bugs("ray_pool.py:starved", seeds=5)
    assert len(found) == 5
    expected = "every live agent is blocked (Barrier#1.arrive, Stage#1.run, Stage#2.run, driver)"
    assert {b.message for b in found} == {expected}
    assert any("waits for Event.wait() at ray_pool.py:20 in arrive" in line for line in found[0].details)


def test_an_actor_pool_large_enough_never_starves() -> None:
    assert bugs("ray_pool.py:enough_workers", seeds=20) == []
