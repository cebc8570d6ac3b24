"""Threads a rank starts call torch.distributed as that rank, as in a real process.

The programs are in tests/real_programs/rank_threads.py: an async checkpoint
writer that agrees with the other ranks on a side group while training goes
on (correct), the same writer on the group training uses (a bug), and a
thread started under ``no_grad`` that computes gradients (a new thread has
grad enabled, as real torch gives it).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import pytest

from dnsse.cli import main

pytestmark = pytest.mark.torch

REAL = Path(__file__).parent / "real_programs"
PROGRAMS = REAL / "rank_threads.py"


def _check(function: str, tmp_path: Path, budget: int = 30) -> tuple[int, dict]:
    report = tmp_path / "report.json"
    status = main(
        ["check", f"{PROGRAMS}:{function}", "--budget", str(budget), "--out", str(tmp_path / "out"),
         "--json", str(report), "--quiet"], contained=False
    )
    return status, json.loads(report.read_text())


@pytest.mark.slow
@pytest.mark.parametrize("function", ["checkpoint_on_side_group", "gradients_in_a_thread_started_under_no_grad"])
def test_a_rank_thread_calling_torch_distributed_correctly_passes(function: str, tmp_path) -> None:
    status, report = _check(function, tmp_path)
    assert status == 0, report["bugs"]
    assert report["executions"] == 30


@pytest.mark.slow
def test_a_rank_thread_sharing_the_training_group_is_found_and_replays(tmp_path) -> None:
    status, report = _check("checkpoint_on_default_group", tmp_path)
    assert status == 1
    bug = report["bugs"][0]
    # The ranks pair the writer's all_reduce with a training one: mismatched, or waiting forever.
    assert bug["kind"] in ("deadlock", "collective_mismatch"), bug
    # The writer's all_reduce takes part: named by its thread, or by its line in write().
    told = bug["message"] + "\n".join(bug.get("details", []))
    assert "(write)" in told or "rank_threads.py:72" in told, bug
    assert main(["replay", bug["trace"]], contained=False) == 1


@pytest.mark.gloo
def test_real_gloo_runs_the_rank_thread_programs(tmp_path) -> None:
    """The verdicts above against real gloo: threads of a rank's process call torch.distributed."""
    torch_mp = pytest.importorskip("torch.multiprocessing")
    import torch.distributed as dist

    if not dist.is_gloo_available():
        pytest.skip("this torch build has no gloo backend")
    sys.path.insert(0, str(REAL))
    import under_gloo

    targets = ["rank_threads.py:checkpoint_on_side_group", "rank_threads.py:gradients_in_a_thread_started_under_no_grad"]
    context = torch_mp.get_context("spawn")
    queue = context.Queue()
    with tempfile.TemporaryDirectory() as directory:
        store = str(Path(directory) / "store")
        workers = [
            context.Process(target=under_gloo.run, args=(rank, 2, store, targets, str(tmp_path), queue))
            for rank in range(2)
        ]
        for worker in workers:
            worker.start()
        try:
            outcomes = dict(queue.get(timeout=600) for _ in workers)
        except Exception as error:  # noqa: BLE001 - gloo could not start here
            pytest.skip(f"two gloo processes could not run here: {error!r}")
        finally:
            for worker in workers:
                worker.join(timeout=10)
                if worker.is_alive():
                    worker.kill()
    assert outcomes == {0: "ok", 1: "ok"}
    assert (tmp_path / "ckpt-1.pt").exists()
