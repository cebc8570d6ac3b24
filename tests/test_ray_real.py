"""A correct program gives the same results under real Ray and under dnsse's control.

Starts one real Ray instance (about 5 s); marked ``ray`` and skipped where Ray
is not installed or cannot start.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest
from helpers import PROGRAMS, SeededChooser, load_program

from dnsse.engine.runner import run_execution
from dnsse.frameworks.ray.framework import RayFramework

pytestmark = pytest.mark.ray


def _run_under_real_ray() -> dict:
    ray = pytest.importorskip("ray", reason="real Ray is not installed (pip install ray)")
    try:
        # address="local": start our own instance, never join one already running on the machine.
        ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    except Exception as error:  # noqa: BLE001 - any failure to start means this machine cannot run Ray
        pytest.skip(f"real Ray cannot start here: {type(error).__name__}: {error}")
    try:
        spec = importlib.util.spec_from_file_location("ray_compare_real", PROGRAMS / "ray_compare.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.main()
    finally:
        ray.shutdown()


@pytest.mark.slow
def test_a_correct_program_gives_the_same_results_under_real_ray_and_under_control() -> None:
    expected = _run_under_real_ray()
    real_ray = sys.modules["ray"]
    target = load_program("ray_compare.py:main")
    framework = RayFramework()
    controlled: list[dict] = []
    with framework.activate():
        for seed in range(10):
            result = run_execution(target, framework, SeededChooser(seed), pinned={"sink": controlled})
            assert result.bug is None, result.bug.render()
    # Real Ray stays imported beside the controlled runtime, and comes back after it.
    assert sys.modules["ray"] is real_ray
    assert controlled == [expected] * 10


_OBSERVE_UNDER_REAL_RAY = """
import importlib.util, json, os, sys
directory = sys.argv[1]
sys.path.insert(0, directory)
import ray
try:
    ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
except Exception as error:
    print("CANNOT START", type(error).__name__, error)
    sys.exit(0)
spec = importlib.util.spec_from_file_location("ray_processes_real", os.path.join(directory, "processes.py"))
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print(json.dumps(module.observe()))
ray.shutdown()
"""


@pytest.mark.slow
def test_worker_processes_keep_globals_between_tasks_as_under_real_ray(tmp_path) -> None:
    pytest.importorskip("ray", reason="real Ray is not installed (pip install ray)")
    directory = PROGRAMS / "ray_processes"
    # The workers import the driver's module `cache` as Ray's do: from the program's directory.
    environment = {**os.environ, "PYTHONPATH": str(directory)}
    done = subprocess.run([sys.executable, "-c", _OBSERVE_UNDER_REAL_RAY, str(directory)], capture_output=True,
                          text=True, timeout=600, env=environment, cwd=tmp_path)
    if done.stdout.startswith("CANNOT START"):
        pytest.skip(f"real Ray cannot start here: {done.stdout.strip()}")
    assert done.returncode == 0, done.stderr[-3000:]
    expected = json.loads(done.stdout.strip().splitlines()[-1])
    target = load_program("ray_processes/processes.py:observe")
    framework = RayFramework(faults=False)
    controlled: list[dict] = []
    with framework.activate():
        for seed in range(5):
            result = run_execution(target, framework, SeededChooser(seed), pinned={"sink": controlled})
            assert result.bug is None, result.bug.render()
    assert controlled == [expected] * 5


_RUN_UNDER_REAL_RAY = """
import importlib.util, sys
import ray
for target in sys.argv[1:]:
    path, name = target.rsplit(":", 1)
    try:
        # A fresh instance for each: what one leaves running must not starve the next.
        ray.init(address="local", num_cpus=4, include_dashboard=False, log_to_driver=False)
    except Exception as error:
        print("CANNOT START", type(error).__name__, error)
        sys.exit(0)
    spec = importlib.util.spec_from_file_location("program_under_real_ray", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        getattr(module, name)()
    finally:
        ray.shutdown()
    print("PASSED", name)
"""


@pytest.mark.slow
def test_what_dnsse_passes_of_cancelling_actor_calls_holds_under_real_ray(tmp_path) -> None:
    """Each of these passes every execution under dnsse (test_ray_cancel_actors.py)."""
    pytest.importorskip("ray", reason="real Ray is not installed (pip install ray)")
    targets = [
        f"{PROGRAMS / 'ray_cancel_actors.py'}:runtime_context_answers_as_ray_does",
        f"{PROGRAMS / 'ray_cancel_actors.py'}:recursive_cancel_of_a_sync_call_reaches_its_task",
    ]
    done = subprocess.run([sys.executable, "-c", _RUN_UNDER_REAL_RAY, *targets], capture_output=True, text=True,
                          timeout=600, cwd=tmp_path)
    if done.stdout.startswith("CANNOT START"):
        pytest.skip(f"real Ray cannot start here: {done.stdout.strip()}")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert done.stdout.count("PASSED") == len(targets), done.stdout
