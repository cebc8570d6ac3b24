"""A task whose code keeps no state in its worker process takes the first clean idle process without building the options.

The pool's lease asks a ``worker`` choice only for code that can keep state
in its process; otherwise it takes the first option, a clean idle process
where there is one. That first option is now found directly: these tests
run programs with it and with the options built every time, and compare
every choice, step, event and bug, and check that the direct path is taken.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import ray_outcomes, run_ray

from dnsse.frameworks.ray import processes

BENCHMARK = Path(__file__).resolve().parent.parent / "benchmarks" / "ray_speed.py"

# Tasks on a declared cluster and an undeclared one, with globals kept in processes, retries and crashes.
PROGRAMS = [
    f"{BENCHMARK}:program",
    "ray_groups.py:globals_stay_in_workers",
    "ray_groups.py:mutating_a_global_in_a_task",
    "ray_resources.py:enough_cpus",
    "ray_retries.py:double_payment_by_task",
    # A task's error names the worker process it ran in.
    "ray_bugs_misc.py:unhandled_task_error",
    "ray_semantics.py:tasks_and_errors",
]


@pytest.mark.parametrize("spec", PROGRAMS)
def test_the_direct_lease_runs_as_the_options_built_every_time(spec: str, monkeypatch: pytest.MonkeyPatch) -> None:
    direct = ray_outcomes(spec)
    with monkeypatch.context() as patched:
        patched.setattr(processes.WorkerPool, "_first_clean_idle", lambda self: None)
        built = ray_outcomes(spec)
    assert direct == built
    assert any(name == "task.start" for *_, events in direct for _, _, name, _ in events)


def test_tasks_of_stateless_code_lease_directly(monkeypatch: pytest.MonkeyPatch) -> None:
    found = []
    first_clean_idle = processes.WorkerPool._first_clean_idle

    def recorded(self: processes.WorkerPool) -> processes.WorkerProcess | None:
        process = first_clean_idle(self)
        found.append(process)
        return process

    monkeypatch.setattr(processes.WorkerPool, "_first_clean_idle", recorded)
    results = run_ray(f"{BENCHMARK}:program", seeds=range(3))
    assert all(result.bug is None for result in results)
    # Nine tasks an execution: the first finds no process yet; a later one finds one its predecessor left clean.
    assert len(found) == 9 * 3
    assert found[0] is None and any(process is not None for process in found)
