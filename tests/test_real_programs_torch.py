"""Programs in the style of the PyTorch tutorials, FSDP2 examples and Megatron-LM: correct
versions pass, bug variants are found and their traces replay, and the correct versions
compute what real gloo computes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import SeededChooser, run_under_gloo

from dnsse.cli import main
from dnsse.engine.runner import run_execution
from dnsse.engine.target import LoadedTarget, TargetSpec

pytest.importorskip("torch", reason="torch is not installed for this Python (it is an optional dependency)")
from dnsse.frameworks.torch_dist.framework import TorchFramework  # noqa: E402 - imports torch

REAL = Path(__file__).parent / "real_programs"

CORRECT = [
    "ddp_basic.py:demo_basic",
    "ddp_basic.py:demo_uneven_inputs_joined",
    "ddp_checkpoint.py:main",
    "fsdp_mlp.py:train",
    "pipeline_1f1b.py:train_batched",
    "pipeline_1f1b.py:train_isend_irecv",
    "ddp_grad_hooks.py:train_clip_after_backward",
]
BUGGY = [
    ("ddp_basic.py:demo_uneven_inputs", "collective_mismatch", "waits in #8 all_reduce"),
    ("ddp_checkpoint.py:main_no_barrier", "exception", "restored the snapshot of epoch 0"),
    # DDP all-reduces the last layer's bucket while backward goes on; a hook changes it meanwhile.
    ("ddp_grad_hooks.py:train_clip_in_hook", "exception", "async all_reduce buffer modified before Work.wait()"),
    ("fsdp_mlp.py:train_validate_on_rank0", "collective_mismatch", "all_gather_into_tensor"),
    ("pipeline_1f1b.py:train_batched_waits_on_sends_only", "exception", "irecv buffer read before Work.wait()"),
    # It asks for NCCL: the host returns from each send, and the streams hang.
    ("pipeline_1f1b.py:train_blocking_send_first", "deadlock", "NCCL stream hang"),
]
# What the gloo comparison runs, and the files each writes per rank.
COMPARED = {"ddp_checkpoint.py:main": "ddp", "fsdp_mlp.py:train": "fsdp", "pipeline_1f1b.py:train_batched": "pipeline"}


@pytest.mark.slow
@pytest.mark.parametrize("target", CORRECT)
def test_the_correct_version_passes(target: str, tmp_path: Path, capsys) -> None:
    status = main(["check", f"{REAL}/{target}", "--budget", "15", "--out", str(tmp_path)], contained=False)
    out = capsys.readouterr().out
    assert status == 0, out
    assert "no bug found" in out


@pytest.mark.slow
@pytest.mark.parametrize(("target", "kind", "says"), BUGGY)
def test_the_bug_variant_is_found_and_replays(target: str, kind: str, says: str, tmp_path: Path, capsys) -> None:
    status = main(["check", f"{REAL}/{target}", "--budget", "100", "--out", str(tmp_path)], contained=False)
    out = capsys.readouterr().out
    assert status == 1, out
    assert f"{kind} " in out and says in out
    replayed = main(["replay", str(tmp_path / "bug-1.json")], contained=False)
    assert replayed == 1
    assert "reproduced" in capsys.readouterr().out


def _under_dnsse(out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DNSSE_COMPARE_DIR", str(out))
    for target in COMPARED:
        loaded = LoadedTarget(TargetSpec.parse(f"{REAL}/{target}"), "torch")
        framework = TorchFramework(2)
        with framework.activate():
            result = run_execution(loaded, framework, SeededChooser(0))
        assert result.bug is None, result.bug.render()


@pytest.mark.slow
@pytest.mark.gloo
def test_correct_versions_compute_the_values_and_gradients_real_gloo_computes(tmp_path, monkeypatch) -> None:
    ours, theirs = tmp_path / "dnsse", tmp_path / "gloo"
    ours.mkdir()
    theirs.mkdir()
    _under_dnsse(ours, monkeypatch)
    run_under_gloo(list(COMPARED), 2, theirs)
    import torch

    for name in COMPARED.values():
        for rank in range(2):
            mine = json.loads((ours / f"{name}-rank{rank}.json").read_text())
            real = json.loads((theirs / f"{name}-rank{rank}.json").read_text())
            assert mine.keys() == real.keys()
            for key in mine:
                assert torch.allclose(torch.tensor(mine[key]), torch.tensor(real[key]), rtol=1e-5, atol=1e-6), (
                    f"{name} rank {rank} {key}: dnsse {mine[key]} gloo {real[key]}"
                )
