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


def test_remote_code_may_use_a_module_its_enclosing_driver_imported() -> None:
    results = outcomes("closure_captures_a_module", seeds=3)
    assert [r.bug.render() for r in results if r.bug is not None] == []


def test_a_driver_that_expects_a_tasks_global_change_fails_as_under_ray() -> None:
    result = outcomes("mutating_a_global_in_a_task", seeds=1)[0]
    assert result.bug is not None and result.bug.kind == BugKind.EXCEPTION
    assert "the driver's LOG has 0 entries" in result.bug.message


def test_ray_util_queue_connects_a_producer_task_to_consumer_tasks() -> None:
    for function in ("pipeline", "nowait_and_timeouts"):
        results = run_ray(f"ray_queue_programs.py:{function}", seeds=range(15), faults=False)
        assert all(r.bug is None for r in results), function


def test_a_consumer_waiting_for_an_item_never_produced_times_out_with_empty() -> None:
    result = run_ray("ray_queue_programs.py:consumers_want_more_than_produced", seeds=range(1), faults=False)[0]
    assert result.bug is not None and "RayTaskError(Empty)" in result.bug.message


def test_cancel_interrupts_a_task_blocked_in_get_and_a_running_coroutine() -> None:
    for function in ("cancel_a_blocked_task", "cancel_a_queued_or_running_async_call", "cancel_a_running_async_call"):
        results = run_ray(f"ray_cancel.py:{function}", seeds=range(20), faults=False)
        assert all(r.bug is None for r in results), function


def test_reading_a_cancelled_result_fails_only_when_the_cancel_came_first() -> None:
    results = run_ray("ray_cancel.py:cancelled_result_used_anyway", seeds=range(30), faults=False)
    failed = [r for r in results if r.bug is not None]
    assert failed and all("TaskCancelledError" in r.bug.message for r in failed)
    assert any(r.bug is None for r in results)


def test_actors_holding_every_declared_cpu_starve_the_task_that_would_free_them() -> None:
    results = run_ray("ray_resources.py:actors_take_every_cpu", seeds=range(40), faults=False)
    deadlocks = [r for r in results if r.bug is not None]
    assert deadlocks and all(r.bug.kind == BugKind.DEADLOCK for r in deadlocks)
    assert any("1 CPU to be free (ray.init declared 2 CPU; held by Worker#1 (1 CPU), Worker#2 (1 CPU))" in d
               for r in deadlocks for d in r.bug.details)
    assert all(r.bug is None for r in run_ray("ray_resources.py:enough_cpus", seeds=range(40), faults=False))


def test_a_task_needing_more_than_the_cluster_has_can_never_start() -> None:
    result = run_ray("ray_resources.py:gpu_task_on_a_cpu_cluster", seeds=range(1), faults=False)[0]
    assert result.bug is not None and result.bug.kind == BugKind.DEADLOCK
    assert any("more than the whole cluster has (0 GPU, from ray.init): it can never start" in d
               for d in result.bug.details)


def test_streaming_generators_give_one_ref_per_yield_and_their_error_last() -> None:
    for function in ("consume", "consume_a_failing_stream"):
        results = run_ray(f"ray_streaming.py:{function}", seeds=range(15), faults=False)
        assert all(r.bug is None for r in results), function


def test_a_race_between_a_stream_and_the_calls_its_task_made_is_found() -> None:
    results = run_ray("ray_streaming.py:progress_read_too_early", seeds=range(30), faults=False)
    assert any(r.bug is not None and "AssertionError" in r.bug.message for r in results)
    assert any(r.bug is None for r in results)


def test_the_job_ends_with_the_driver_even_with_workers_and_their_threads_still_running() -> None:
    results = run_ray("ray_job_end.py:main", seeds=range(10), faults=False)
    assert all(r.bug is None for r in results), [r.bug.render() for r in results if r.bug][:1]


def test_async_actors_run_create_task_queues_and_wait_for_on_their_event_loop() -> None:
    results = run_ray("ray_async_loop.py:queue_in_an_actor", seeds=range(20), faults=False)
    assert all(r.bug is None for r in results), [r.bug.render() for r in results if r.bug][:1]


def test_an_async_lock_held_across_a_call_to_the_same_actor_deadlocks() -> None:
    result = run_ray("ray_async_loop.py:lock_held_across_a_call_to_itself", seeds=range(1), faults=False)[0]
    assert result.bug is not None and result.bug.kind == BugKind.DEADLOCK
    assert any("Cache#1.load#" in d and "waits for Lock.acquire() at ray_async_loop.py:50 in load" in d
               for d in result.bug.details), result.bug.details


def test_recursive_cancel_reaches_the_tasks_a_cancelled_task_submitted() -> None:
    results = run_ray("ray_cancel.py:cancel_reaches_the_child", seeds=range(20), faults=False)
    assert [r.bug.render() for r in results if r.bug is not None] == []
    left = run_ray("ray_cancel.py:cancel_leaves_the_child", seeds=range(5), faults=False)
    assert all(r.bug is not None and r.bug.kind == BugKind.DEADLOCK for r in left)
    assert all(any("blocked_child#3 waits for ray.get" in d for d in r.bug.details) for r in left)
