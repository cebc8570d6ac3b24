"""A correct program gives the same results under real Ray and under dnsse's control.

Starts one real Ray instance (about 5 s); marked ``ray`` and skipped where Ray
is not installed or cannot start.
"""

from __future__ import annotations

import importlib.util
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
