"""Bug variants of the programs of test_real_programs_torch_more.py: each is found with the
kind of bug it is, and its trace replays; what dnsse cannot run is refused, not reported; and
programs whose first executions once went wrong in a fresh process pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from dnsse.cli import main

pytest.importorskip("torch", reason="torch is not installed for this Python (it is an optional dependency)")

REAL = Path(__file__).parent / "real_programs"

BUGGY = [
    ("torch_pipelining.py:gpipe_microbatch_mismatch", 2, "exception", "must match the size"),
    ("torch_ddp_features.py:no_sync_on_one_rank", 2, "collective_mismatch", "rank 0 issued 4 collectives on WORLD and finished"),
    ("torch_ddp_features.py:zero_consolidate_on_rank0_only", 2, "collective_mismatch", "but rank 0 waits in #9 broadcast"),
    ("torch_dtensor_tp.py:tp_log_on_rank0", 2, "collective_mismatch", "all_gather_into_tensor"),
    ("torch_dcp.py:load_before_others_saved", 2, "exception", "FileNotFoundError"),
    ("torch_collectives_megatron.py:all_to_all_wrong_splits", 2, "collective_mismatch", "disagree on split sizes: rank 0 sends 2 rows to rank 1, which expects 3"),
    ("torch_collectives_megatron.py:tagged_blocking_reversed", 2, "deadlock", "every live agent is blocked"),
    ("torch_collectives_megatron.py:monitored_missing", 3, "collective_mismatch", "waits in #1 monitored_barrier"),
    ("torch_collectives_megatron.py:ring_read_before_wait", 2, "exception", "irecv buffer read before Work.wait()"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("target", "world_size", "kind", "says"), BUGGY)
def test_the_bug_variant_is_found_and_replays(target: str, world_size: int, kind: str, says: str, tmp_path: Path, capsys) -> None:
    status = main(["check", f"{REAL}/{target}", "--world-size", str(world_size), "--budget", "30",
                   "--no-minimize", "--out", str(tmp_path)], contained=False)
    out = capsys.readouterr().out
    assert status == 1, out
    assert f"{kind} " in out and says in out, out
    assert main(["replay", str(tmp_path / "bug-1.json")], contained=False) == 1
    assert "reproduced" in capsys.readouterr().out


def test_sync_batch_norm_of_a_cuda_program_is_refused_on_a_machine_without_cuda(tmp_path: Path, capsys) -> None:
    # Its statistics kernels are CUDA's alone: on the CPU stand-in torch would raise, which is no bug of the program.
    status = main(
        ["check", f"{REAL}/torch_ddp_features.py:sync_batch_norm_cuda", "--budget", "5", "--out", str(tmp_path)],
        contained=False,
    )
    captured = capsys.readouterr()
    assert status == 2, captured.out
    assert "torch.nn.SyncBatchNorm (training) of a CUDA program" in captured.err
    assert "torch_ddp_features.py:" in captured.err and "Traceback" not in captured.err


def test_autograd_collectives_imported_by_a_rank_under_nccl_pass(tmp_path: Path, capsys) -> None:
    # torch.distributed.nn.functional's group=group.WORLD default, evaluated when a rank first imported
    # it, was that rank's group for every rank: the other rank's collective went to a group not its own.
    status = main(["check", f"{REAL}/torch_collectives_megatron.py:autograd_collectives_nccl", "--budget", "3",
                   "--execution-timeout", "120", "--out", str(tmp_path)], contained=False)
    out = capsys.readouterr().out
    assert status == 0, out
    assert "no bug found" in out and "inconclusive" not in out
