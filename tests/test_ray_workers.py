"""Ray as it really behaves: per-worker globals, concurrency groups, pending-call limits, ActorPool."""

from __future__ import annotations

from helpers import run_ray

from dnsse.engine.bugs import BugKind

PROGRAM = "ray_groups.py"


def outcomes(function: str, seeds: int = 30) -> list:
    return run_ray(f"{PROGRAM}:{function}", seeds=range(seeds), faults=False)


def test_two_calls_in_a_group_of_two_overlap_so_their_lost_update_is_found() -> None:
    results = outcomes("group_of_two_races")
    assert any(r.bug is not None and "AssertionError" in r.bug.message for r in results)
    assert any(r.bug is None for r in results)


def test_calls_in_a_group_of_one_never_overlap() -> None:
    assert all(r.bug is None for r in outcomes("group_of_one_is_serial"))


def test_a_call_may_name_its_group_in_options() -> None:
    assert any(r.bug is not None for r in outcomes("group_by_options"))


def test_max_pending_calls_refuses_a_call_beyond_the_limit_when_the_earlier_ones_are_unfinished() -> None:
    results = outcomes("too_many_pending")
    refused = [r for r in results if r.bug is not None]
    assert refused and all("PendingCallsLimitExceeded" in r.bug.message for r in refused)
    assert any(r.bug is None for r in results)  # when the first call finished in time
    assert all(r.bug is None for r in outcomes("pending_within_limit", seeds=10))


def test_actor_pool_map_with_two_returns_gives_each_calls_values() -> None:
    assert all(r.bug is None for r in outcomes("pool_two_returns", seeds=10))


def test_each_task_sees_its_own_copy_of_the_globals_it_refers_to() -> None:
    assert all(r.bug is None for r in outcomes("globals_stay_in_workers", seeds=5))


def test_a_driver_that_expects_a_tasks_global_change_fails_as_under_ray() -> None:
    result = outcomes("mutating_a_global_in_a_task", seeds=1)[0]
    assert result.bug is not None and result.bug.kind == BugKind.EXCEPTION
    assert "the driver's LOG has 0 entries" in result.bug.message
