"""Programs in the shapes of a third set of real code, each once wrong under dnsse.

torchtitan's asynchronous checkpoint on a gloo group of its own, Ray's
checkpointing example (``sys.exit`` in a retried actor method), DeepSpeed's
reduction-stream continuation (``Work.get_future().then`` waited in an
autograd hook), a lost update among ``ThreadPoolExecutor`` workers,
Megatron's sequence-parallel weight gradient (an async all-gather in a custom
``autograd.Function.backward``) and Ray's streaming generators. Correct
versions pass, bug variants are found with their kind and their traces
replay; the marked tests compare the correct versions with real gloo and Ray.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dnsse.cli import main
from helpers import in_this_process

REAL = Path(__file__).parent / "real_programs"


def _check(target: str, out: Path, *options: str) -> int:
    contained = not in_this_process(REAL / target)
    return main(["check", f"{REAL}/{target}", *options, "--no-minimize", "--out", str(out)], contained=contained)


def _found_and_replayed(target: str, kind: str, says: str, out: Path, capsys, *options: str) -> None:
    status = _check(target, out, *options)
    printed = capsys.readouterr().out
    assert status == 1, printed
    assert f"{kind} " in printed and says in printed, printed
    assert main(["replay", str(out / "bug-1.json")], contained=not in_this_process(REAL / target)) == 1
    assert "reproduced" in capsys.readouterr().out


def _passes(target: str, out: Path, capsys, *options: str) -> None:
    status = _check(target, out, *options)
    printed = capsys.readouterr().out
    assert status == 0, printed
    assert "no bug found" in printed and "inconclusive" not in printed, printed


# ------------------------------------------------ torchtitan's async checkpoint
@pytest.mark.torch
def test_async_save_on_a_gloo_group_of_its_own_passes(tmp_path: Path, capsys, monkeypatch) -> None:
    pytest.importorskip("torch")
    monkeypatch.setenv("DNSSE_COMPARE_DIR", str(tmp_path))
    _passes("torch_async_checkpoint.py:train", tmp_path, capsys, "--world-size", "2", "--budget", "3")
    written = json.loads((tmp_path / "async_ckpt-rank0.json").read_text())
    # What real gloo lists for a gloo group: both devices (checked against gloo below).
    assert written["devices"] == ["cpu", "cuda"]


_DEVICES = """
import torch.distributed as dist
from torch.distributed.distributed_c10d import _device_capability


def run(rank, world_size):
    dist.init_process_group("nccl")
    assert _device_capability() == ["cuda"], _device_capability()
    mixed = dist.new_group(backend="cpu:gloo,cuda:nccl")
    assert _device_capability(mixed) == ["cpu", "cuda"], _device_capability(mixed)
    gloo = dist.new_group(backend="gloo")
    assert sorted(_device_capability(gloo)) == ["cpu", "cuda"], _device_capability(gloo)
"""


@pytest.mark.torch
def test_groups_list_the_devices_their_backend_serves(tmp_path: Path, capsys) -> None:
    pytest.importorskip("torch")
    program = tmp_path / "devices.py"
    program.write_text(_DEVICES)
    status = main(
        ["check", f"{program}:run", "--world-size", "2", "--budget", "1", "--out", str(tmp_path)],
        contained=False,
    )
    printed = capsys.readouterr().out
    assert status == 0, printed


@pytest.mark.slow
@pytest.mark.torch
def test_loading_before_the_async_save_finished_is_found(tmp_path: Path, capsys) -> None:
    pytest.importorskip("torch")
    # The loader's collectives on the checkpoint group meet the saving thread's.
    _found_and_replayed("torch_async_checkpoint.py:load_before_save_finished", "collective_mismatch",
                        "AsyncCheckpointExecutor", tmp_path, capsys, "--world-size", "2", "--budget", "30")


# ------------------------------------------------ Ray's actor checkpointing example
@pytest.mark.parametrize("target", ["ray_checkpointing.py:run", "ray_checkpointing.py:run_exit_statuses"])
def test_sys_exit_in_a_retried_actor_method_is_retried_on_the_restarted_actor(target: str, tmp_path: Path,
                                                                              capsys) -> None:
    # sys.exit(1) is an unexpected exit of the worker for Ray: the actor restarts and the call runs again;
    # sys.exit(0) is an intended one: the actor dies for good.
    _passes(target, tmp_path, capsys, "--budget", "10")


def test_an_actor_without_its_checkpoint_loses_its_state_on_restart(tmp_path: Path, capsys) -> None:
    _found_and_replayed("ray_checkpointing.py:run_without_checkpoint", "exception", "KeyError: 'key-0'",
                        tmp_path, capsys, "--budget", "10")


# ------------------------------------------------ DeepSpeed's reduction-stream continuation
@pytest.mark.slow
@pytest.mark.torch
@pytest.mark.parametrize("target", ["torch_reduction_continuation.py:train",
                                    "torch_reduction_continuation.py:train_wait_all"])
def test_continuations_of_work_futures_waited_inside_backward_hooks_pass(target: str, tmp_path: Path, capsys) -> None:
    pytest.importorskip("torch")
    # Each continuation was a plain torch future: waited inside the hook (itself or through
    # torch.futures.wait_all), it blocked outside any scheduling point.
    _passes(target, tmp_path, capsys, "--world-size", "2", "--budget", "5", "--execution-timeout", "120")


@pytest.mark.slow
@pytest.mark.torch
def test_a_read_of_the_bucket_before_its_all_reduce_finished_is_found_in_the_hook(tmp_path: Path, capsys) -> None:
    pytest.importorskip("torch")
    _found_and_replayed("torch_reduction_continuation.py:norm_before_wait", "exception",
                        "async all_reduce buffer read before Work.wait() on rank", tmp_path, capsys,
                        "--world-size", "2", "--budget", "5", "--execution-timeout", "120")


# ------------------------------------------------ Megatron's sequence-parallel weight gradient
@pytest.mark.torch
def test_an_async_all_gather_waited_inside_an_autograd_function_backward_passes(tmp_path: Path, capsys) -> None:
    pytest.importorskip("torch")
    _passes("torch_sequence_parallel.py:linear_sp", tmp_path, capsys, "--world-size", "2", "--budget", "5")


@pytest.mark.slow
@pytest.mark.torch
def test_a_read_before_wait_inside_an_autograd_function_backward_is_found(tmp_path: Path, capsys) -> None:
    pytest.importorskip("torch")
    _found_and_replayed("torch_sequence_parallel.py:wgrad_before_wait", "exception",
                        "async all_gather_into_tensor buffer read before Work.wait() on rank", tmp_path, capsys,
                        "--world-size", "2", "--budget", "5")


# ------------------------------------------------ the correct torch programs against real gloo
GLOO_COMPARED = [
    ("torch_async_checkpoint.py:train", "async_ckpt"),
    ("torch_reduction_continuation.py:train", "reduction_continuation"),
    ("torch_sequence_parallel.py:linear_sp", "sequence_parallel"),
]


@pytest.mark.slow
@pytest.mark.gloo
def test_the_correct_torch_programs_compute_what_they_compute_under_real_gloo(tmp_path: Path, capsys) -> None:
    """Values, and the devices a gloo group lists, as real gloo gives them (exact: the same kernels run)."""
    pytest.importorskip("torch")
    from helpers import run_under_gloo

    ours = tmp_path / "ours"
    real = tmp_path / "real"
    ours.mkdir()
    real.mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DNSSE_COMPARE_DIR", str(ours))
        for target, _ in GLOO_COMPARED:
            _passes(target, tmp_path / target.replace(":", "-"), capsys, "--world-size", "2", "--budget", "1")
    run_under_gloo([target for target, _ in GLOO_COMPARED], 2, real)
    for _, name in GLOO_COMPARED:
        for rank in range(2):
            written = f"{name}-rank{rank}.json"
            assert json.loads((ours / written).read_text()) == json.loads((real / written).read_text()), written


# ------------------------------------------------ a lost update among ThreadPoolExecutor workers
def test_a_lost_update_among_pool_workers_is_found_and_its_trace_replays(tmp_path: Path, capsys) -> None:
    # as_completed took the futures' locks, and a pool joined its threads, in the order of their addresses.
    _found_and_replayed("py_executor_counter.py:racy", "exception", "lost update: total", tmp_path, capsys,
                        "--budget", "200")


def test_the_locked_pool_program_passes_as_it_does_in_plain_python(tmp_path: Path, capsys) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("py_executor_counter", REAL / "py_executor_counter.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.locked() == 10
    _passes("py_executor_counter.py:locked", tmp_path, capsys, "--budget", "40")


def test_a_pool_program_takes_the_same_steps_whenever_its_schedule_is_replayed() -> None:
    from helpers import SeededChooser

    from dnsse.engine.runner import run_execution
    from dnsse.engine.target import LoadedTarget, TargetSpec
    from dnsse.frameworks.threads.framework import ThreadsFramework

    target = LoadedTarget(TargetSpec.parse(f"{REAL}/py_executor_counter.py:racy"), "threads")
    framework = ThreadsFramework()

    def steps(result) -> list:
        return [(step, operation.kind, operation.objects) for step, operation in result.history]

    with framework.activate():
        first = [steps(run_execution(target, framework, SeededChooser(seed))) for seed in range(12)]
        # Later, with other futures and threads made (and freed) in between: other addresses.
        again = [steps(run_execution(target, framework, SeededChooser(seed))) for seed in reversed(range(12))]
    assert first == list(reversed(again))


# ------------------------------------------------ Ray's streaming generators from async actors
def test_async_generator_methods_of_async_actors_stream_and_ray_raylet_names_import(tmp_path: Path, capsys) -> None:
    # `from ray._raylet import ObjectRefGenerator` was refused; an async generator method returned one ObjectRef.
    _passes("ray_async_streaming.py:run", tmp_path, capsys, "--budget", "30")


@pytest.mark.slow
def test_two_interleaved_streams_reading_the_actors_shared_request_are_found(tmp_path: Path, capsys) -> None:
    _found_and_replayed("ray_async_streaming.py:run_shared_request", "exception", "AssertionError", tmp_path,
                        capsys, "--budget", "30")


def test_names_of_ray_raylet_outside_its_public_re_exports_are_refused(tmp_path: Path, capsys) -> None:
    program = tmp_path / "ids.py"
    program.write_text("import ray\nfrom ray._raylet import GcsClient\n\ndef run():\n    ray.init()\n")
    status = main(["check", f"{program}:run", "--budget", "1", "--out", str(tmp_path)], contained=False)
    captured = capsys.readouterr()
    assert status == 2, captured.out
    assert "ray._raylet.GcsClient" in captured.err and "Traceback" not in captured.err


# ------------------------------------------------ the Ray programs against real Ray
_UNDER_REAL_RAY = """
import importlib, json, sys
sys.path[:0] = sys.argv[1:]
import ray
try:
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
except Exception as error:
    print("OUTCOMES", json.dumps({"cannot start": f"{type(error).__name__}: {error}"}), flush=True)
    sys.exit(0)
outcomes = {}
for target in json.loads(sys.stdin.read()):
    module, function = target.split(":")
    try:
        outcomes[target] = ["returned", getattr(importlib.import_module(module[:-3]), function)()]
    except Exception as error:
        outcomes[target] = ["raised", type(error).__name__, str(error)]
print("OUTCOMES", json.dumps(outcomes), flush=True)
ray.shutdown()
"""


@pytest.mark.slow
@pytest.mark.ray
def test_under_real_ray_the_correct_versions_return_the_same_and_the_lost_checkpoint_fails_alike() -> None:
    pytest.importorskip("ray", reason="real Ray is not installed (pip install ray)")
    import os
    import subprocess
    import sys

    targets = ["ray_checkpointing.py:run", "ray_checkpointing.py:run_without_checkpoint",
               "ray_checkpointing.py:run_exit_statuses", "ray_async_streaming.py:run"]
    environment = {**os.environ, "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0"}
    done = subprocess.run([sys.executable, "-c", _UNDER_REAL_RAY, str(REAL)], input=json.dumps(targets),
                          capture_output=True, text=True, timeout=600, env=environment)
    line = next((line for line in done.stdout.splitlines() if line.startswith("OUTCOMES ")), None)
    assert line is not None, done.stdout + done.stderr
    outcomes = json.loads(line.removeprefix("OUTCOMES "))
    if "cannot start" in outcomes:
        pytest.skip(f"real Ray cannot start here: {outcomes['cannot start']}")
    assert outcomes["ray_checkpointing.py:run"] == ["returned", [0, 1, 2, 3]]
    assert outcomes["ray_checkpointing.py:run_exit_statuses"][0] == "returned", outcomes
    lost = outcomes["ray_checkpointing.py:run_without_checkpoint"]
    assert lost[:2] == ["raised", "RayTaskError(KeyError)"] and "key-0" in lost[2], lost
    assert outcomes["ray_async_streaming.py:run"] == [
        "returned", ["THE", "QUICK", "FOX", "JUMPS", "OVER", "DOGS", "A", "B", "C", "D"]]
