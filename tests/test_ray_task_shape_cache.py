"""A remote function reads its options once: the runs are the same as when every task reads them anew.

``RemoteFunction`` keeps what its calls share (whether they stream, how many
refs they return, their retries and resource demand) after the first call,
and a task whose options and parent name no placement group goes straight to
the cluster's pool instead of asking ``placement_of``. These tests run
programs both ways, with the kept values and with every task working them
out again, and compare every choice, step, event and bug; and they check
that the kept values are really what the tasks use.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import ray_outcomes, run_ray

from dnsse.frameworks.ray import tasks

BENCHMARK = Path(__file__).resolve().parent.parent / "benchmarks" / "ray_speed.py"

# Tasks with retries and faults, resources, placement groups (captured and not), streaming, errors.
PROGRAMS = [
    f"{BENCHMARK}:program",
    "ray_retries.py:double_payment_by_task",
    "ray_resources.py:enough_cpus",
    "ray_resources.py:gpu_task_on_a_cpu_cluster",
    "ray_placement_groups.py:child_waits_for_parents_bundle",
    "ray_placement_removal.py:capture_child_tasks",
    "ray_placement_removal.py:removal_while_a_retried_task_runs",
    "ray_streaming.py:progress_read_too_early",
    "ray_semantics.py:tasks_and_errors",
]



def _never_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every task works out its function's options again, and asks placement_of, as before they were kept."""
    forgotten = property(lambda self: None, lambda self, value: None)
    monkeypatch.setattr(tasks.RemoteFunction, "_returns", forgotten, raising=False)
    monkeypatch.setattr(tasks.RemoteFunction, "_per_task", forgotten, raising=False)
    original = tasks.RemoteFunction._per_task_of_calls

    def always_placed(self: tasks.RemoteFunction) -> tasks._PerTask:
        per_task = original(self)
        return tasks._PerTask(per_task.retries, per_task.retry_exceptions, per_task.demand, placed=True)

    monkeypatch.setattr(tasks.RemoteFunction, "_per_task_of_calls", always_placed)


@pytest.mark.parametrize("spec", PROGRAMS)
def test_kept_options_run_as_options_read_at_every_task(spec: str, monkeypatch: pytest.MonkeyPatch) -> None:
    kept = ray_outcomes(spec)
    with monkeypatch.context() as patched:
        _never_kept(patched)
        anew = ray_outcomes(spec)
    assert kept == anew
    # The programs submit tasks (the compared runs are not all cut short before the first).
    assert any(name == "task.submit" for *_, events in kept for _, _, name, _ in events)


def test_a_function_reads_its_options_at_its_first_task_only(monkeypatch: pytest.MonkeyPatch) -> None:
    reads = {"returns": 0, "per_task": 0, "placement_of": 0}
    returns_of_calls, per_task_of_calls = tasks.RemoteFunction._returns_of_calls, tasks.RemoteFunction._per_task_of_calls
    placement_of = tasks.placement_of

    def counted(name: str, function):  # type: ignore[no-untyped-def]
        def count(*args, **kwargs):  # type: ignore[no-untyped-def]
            reads[name] += 1
            return function(*args, **kwargs)

        return count

    monkeypatch.setattr(tasks.RemoteFunction, "_returns_of_calls", counted("returns", returns_of_calls))
    monkeypatch.setattr(tasks.RemoteFunction, "_per_task_of_calls", counted("per_task", per_task_of_calls))
    monkeypatch.setattr(tasks, "placement_of", counted("placement_of", placement_of))
    # Nine tasks of two functions (eight squares, one total) in each execution, no placement group.
    results = run_ray(f"{BENCHMARK}:program", seeds=range(3))
    assert all(result.bug is None for result in results)
    assert reads == {"returns": 2 * 3, "per_task": 2 * 3, "placement_of": 0}


def test_tasks_in_a_capturing_group_still_ask_where_they_go(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []
    placement_of = tasks.placement_of

    def recorded(runtime, options, demand, what, parent):  # type: ignore[no-untyped-def]
        asked.append(what)
        return placement_of(runtime, options, demand, what, parent)

    monkeypatch.setattr(tasks, "placement_of", recorded)
    results = run_ray("ray_placement_removal.py:capture_child_tasks", seeds=range(2), faults=False)
    assert all(result.bug is None for result in results)
    # Each execution: two parents placed by their options, and of their children the one its group captures
    # and the one whose options opt out; the child of the parent whose group does not capture goes
    # to the cluster's pool without asking (and Ray 2.60 answers None there, which the program asserts).
    per_execution = sorted(what.partition("#")[0] for what in asked[: len(asked) // 2])
    assert len(asked) == 2 * len(per_execution)
    assert per_execution == ["opted_out", "parent_where", "parent_where", "where", "where"]
