"""NCCL semantics: operations return once enqueued and run in stream order.

The same program runs under gloo's semantics and NCCL's (``backend`` is an
input of each program in tests/real_programs/nccl_vs_gloo.py, which says
what each backend does); where the backends differ, so do the verdicts.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest

from dnsse.cli import main

pytestmark = pytest.mark.torch

REAL = Path(__file__).parent / "real_programs"
PROGRAMS = REAL / "nccl_vs_gloo.py"


def _check(target: str, backend: str, tmp_path: Path, budget: int = 40) -> tuple[int, dict]:
    report = tmp_path / f"report-{backend}.json"
    status = main(
        [
            "check", target, "--input", f"backend={backend}", "--budget", str(budget),
            "--out", str(tmp_path / backend), "--json", str(report), "--quiet",
        ], contained=False
    )
    return status, json.loads(report.read_text())


@pytest.mark.slow
@pytest.mark.parametrize(
    ("function", "nccl_kind", "nccl_says"),
    [
        # Unbatched isend before irecv on both ranks: both NCCL streams wait in their send.
        ("isend_before_irecv", "deadlock", "NCCL stream hang"),
        # A collective returns before the peer joined, so it orders nothing on the host.
        ("all_reduce_as_barrier", "exception", "FileNotFoundError"),
        # Work.wait() without a timeout orders the stream, not the host.
        ("wait_as_barrier", "exception", "FileNotFoundError"),
        # The group's own backend decides: new_group(backend="nccl") under a gloo default group.
        ("side_group_as_barrier", "exception", "FileNotFoundError"),
        # A batch runs on the group's collective stream: rank 0 batches first, rank 1 all_reduces first.
        ("batch_and_collective_in_rank_order", "deadlock", "batch_isend_irecv runs on its group's collective stream"),
    ],
)
def test_correct_under_gloo_is_a_bug_under_nccl(function: str, nccl_kind: str, nccl_says: str, tmp_path) -> None:
    target = f"{PROGRAMS}:{function}"
    gloo_status, gloo = _check(target, "gloo", tmp_path)
    assert gloo_status == 0, gloo["bugs"]
    assert gloo["semantics"] == "gloo"
    nccl_status, nccl = _check(target, "nccl", tmp_path)
    assert nccl_status == 1
    assert nccl["semantics"] == "nccl"
    bug = nccl["bugs"][0]
    assert bug["kind"] == nccl_kind and nccl_says in bug["message"], bug
    assert main(["replay", bug["trace"]], contained=False) == 1


@pytest.mark.slow
@pytest.mark.parametrize("function", ["synchronize_then_read", "work_synchronize_then_read"])
def test_synchronize_makes_a_read_before_wait_safe_under_nccl_only(function: str, tmp_path) -> None:
    target = f"{PROGRAMS}:{function}"
    gloo_status, gloo = _check(target, "gloo", tmp_path)
    assert gloo_status == 1
    assert "all_reduce buffer read before Work.wait()" in gloo["bugs"][0]["message"]
    nccl_status, nccl = _check(target, "nccl", tmp_path)
    assert nccl_status == 0, nccl["bugs"]


@pytest.mark.parametrize(
    "function",
    [
        "batched_exchange", "item_after_all_reduce", "barrier_between", "add_after_send", "item_after_wait",
        "gloo_side_group_as_barrier",
    ],
)
@pytest.mark.parametrize("backend", ["gloo", "nccl"])
def test_correct_under_both(function: str, backend: str, tmp_path) -> None:
    status, report = _check(f"{PROGRAMS}:{function}", backend, tmp_path)
    assert status == 0, report["bugs"]
    assert report["semantics"] == backend


@pytest.mark.slow
def test_send_before_recv_hangs_the_host_under_gloo_and_the_streams_under_nccl(tmp_path) -> None:
    target = f"{PROGRAMS}:send_before_recv"
    _, gloo = _check(target, "gloo", tmp_path)
    _, nccl = _check(target, "nccl", tmp_path)
    host, device = gloo["bugs"][0], nccl["bugs"][0]
    assert host["kind"] == device["kind"] == "deadlock"
    assert "NCCL" not in host["message"]
    assert "waits for send(dst=1, tag=0) on rank 0 to be received" in "\n".join(host["details"])
    assert device["message"].startswith("NCCL stream hang (the GPU would wait forever)")
    assert any(
        "stream for send/recv between ranks 0 and 1 is stuck at send(dst=1, tag=0) on rank 0" in line
        for line in device["details"]
    ), device["details"]


def test_the_terminal_report_names_the_semantics(tmp_path, capsys) -> None:
    status = main(["check", f"{PROGRAMS}:barrier_between", "--input", "backend=nccl", "--budget", "5",
                   "--out", str(tmp_path)], contained=False)
    assert status == 0
    assert "torch, nccl semantics" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["gloo", "nccl"])
def test_megatron_1f1b_over_isend_irecv_is_correct_under_both(backend: str, tmp_path) -> None:
    status, report = _check(f"{REAL}/pipeline_1f1b.py:train_isend_irecv", backend, tmp_path, budget=15)
    assert status == 0, report["bugs"]


@pytest.mark.slow
def test_megatron_1f1b_with_every_rank_sending_first_hangs_only_nccl(tmp_path) -> None:
    target = f"{REAL}/pipeline_1f1b.py:train_isend_irecv_sends_first"
    gloo_status, gloo = _check(target, "gloo", tmp_path, budget=15)
    assert gloo_status == 0, gloo["bugs"]
    nccl_status, nccl = _check(target, "nccl", tmp_path, budget=15)
    assert nccl_status == 1
    assert nccl["bugs"][0]["message"].startswith("NCCL stream hang")


@pytest.mark.slow
@pytest.mark.gloo
def test_real_gloo_runs_the_programs_gloo_passes(tmp_path) -> None:
    """The gloo verdicts above, against real gloo: these programs complete with the values they assert."""
    torch_mp = pytest.importorskip("torch.multiprocessing")
    import sys

    import torch.distributed as dist

    if not dist.is_gloo_available():
        pytest.skip("this torch build has no gloo backend")
    sys.path.insert(0, str(REAL))
    import under_gloo

    targets = [
        "nccl_vs_gloo.py:isend_before_irecv", "nccl_vs_gloo.py:all_reduce_as_barrier", "nccl_vs_gloo.py:wait_as_barrier",
        "nccl_vs_gloo.py:side_group_as_barrier", "nccl_vs_gloo.py:gloo_side_group_as_barrier",
        "nccl_vs_gloo.py:batch_and_collective_in_rank_order",
    ]
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
