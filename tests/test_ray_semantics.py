"""The controlled Ray keeps Ray's guarantees, and explores every order they leave open."""

from __future__ import annotations

import sys
import types

import pytest
from helpers import run_ray

from dnsse.engine.bugs import BugKind

PASSING = [
    "per_caller_order",
    "call_waits_for_its_argument",
    "objects_are_copied",
    "tasks_and_errors",
    "waiting",
    "timeouts",
    "named_actors_and_kill",
    "actor_pool",
    "method_options_and_retried_exceptions",
    "driver_coroutine_awaits_a_ref",
]


@pytest.mark.parametrize("driver", PASSING)
def test_ray_guarantee_holds_under_every_explored_schedule(driver: str) -> None:
    results = run_ray(f"ray_semantics.py:{driver}", seeds=range(10))
    assert [r.bug.render() for r in results if r.bug is not None] == []


def test_calls_from_two_callers_run_in_either_order() -> None:
    results = run_ray("ray_semantics.py:two_callers", seeds=range(30))
    outcomes = {r.bug.message if r.bug else "a first" for r in results}
    assert outcomes == {"a first", "AssertionError: b ran first"}


def test_out_of_order_execution_lifts_the_per_caller_order() -> None:
    results = run_ray("ray_semantics.py:out_of_order", seeds=range(30))
    outcomes = {r.bug.message if r.bug else "in order" for r in results}
    assert outcomes == {"in order", "AssertionError: b ran first"}


def test_events_name_tasks_actor_calls_and_gets() -> None:
    [result] = run_ray("ray_semantics.py:per_caller_order", seeds=[0])
    names = [event.name for event in result.events]
    assert {"actor.create", "actor.call.submit", "actor.call.start", "actor.call.end", "ray.get"} <= set(names)
    starts = [e.fields for e in result.events if e.name == "actor.call.start"]
    assert starts[0] == {"actor": "Log#1", "method": "append"}
    [result] = run_ray("ray_semantics.py:waiting", seeds=[0])
    assert {"task.submit", "task.start", "task.end", "ray.wait"} <= {event.name for event in result.events}


def test_the_controlled_modules_are_removed_after_the_campaign() -> None:
    from dnsse.frameworks.ray.framework import RayFramework

    before = sys.modules.get("ray")
    with RayFramework().activate():
        import ray

        assert ray.__name__ == "dnsse.frameworks.ray.api"
    assert sys.modules.get("ray") is before


def test_a_ray_imported_before_the_campaign_is_shadowed_for_the_target_and_restored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_ray, real_util = types.ModuleType("ray"), types.ModuleType("ray.util")
    monkeypatch.setitem(sys.modules, "ray", real_ray)
    monkeypatch.setitem(sys.modules, "ray.util", real_util)
    [result] = run_ray("ray_semantics.py:actor_pool", seeds=[0])
    assert result.bug is None and "actor.call.start" in {event.name for event in result.events}
    assert sys.modules["ray"] is real_ray and sys.modules["ray.util"] is real_util


def test_a_failed_task_reaching_the_driver_is_reported_with_both_tracebacks() -> None:
    [result] = run_ray("ray_bugs_misc.py:unhandled_task_error", seeds=[0])
    bug = result.bug
    assert bug.kind == BugKind.EXCEPTION
    assert bug.message == "RayTaskError(KeyError): ray::lookup() failed with KeyError: 'missing'"
    driver, task = bug.details
    assert 'ray.get(lookup.remote("missing"))' in driver and "dnsse" not in driver
    assert task.startswith("raised in ray::lookup() (worker process 1):") and "return table[key]" in task
