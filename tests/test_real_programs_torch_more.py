"""More real torch.distributed programs, in the shapes of torch's docs and tutorials, torchtitan
and Megatron-LM: pipelining schedules, DDP's features (no_sync, unused parameters, static
graph, communication hooks, Join, ZeroRedundancyOptimizer), distributed checkpoints,
DeviceMesh/DTensor/tensor parallelism, and the rarer collectives. Correct versions pass on
every schedule tried and compute what real gloo computes; their bug variants are in
test_real_programs_torch_bugs.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import SeededChooser, run_under_gloo

from dnsse.engine.runner import run_execution
from dnsse.engine.target import LoadedTarget, TargetSpec

pytest.importorskip("torch", reason="torch is not installed for this Python (it is an optional dependency)")
from dnsse.frameworks.torch_dist.framework import TorchFramework  # noqa: E402 - imports torch

REAL = Path(__file__).parent / "real_programs"

# (target, world size): each writes its values per rank where DNSSE_COMPARE_DIR says.
CORRECT = [
    ("torch_pipelining.py:gpipe", 2),
    ("torch_pipelining.py:one_f_one_b", 2),
    ("torch_pipelining.py:interleaved", 2),
    ("torch_ddp_features.py:no_sync_accumulation", 2),
    ("torch_ddp_features.py:unused_parameters", 2),
    ("torch_ddp_features.py:static_graph", 2),
    ("torch_ddp_features.py:hook_allreduce", 2),
    ("torch_ddp_features.py:hook_fp16", 2),
    ("torch_ddp_features.py:hook_powersgd", 2),
    ("torch_ddp_features.py:hook_waits_inside", 2),
    ("torch_ddp_features.py:join_uneven", 2),
    ("torch_ddp_features.py:zero_optimizer", 2),
    ("torch_ddp_features.py:zero_join", 2),
    ("torch_dcp.py:save_load", 2),
    ("torch_dcp.py:save_load_fs", 2),
    ("torch_dcp.py:save_load_nccl", 2),
    ("torch_dtensor_tp.py:tensor_parallel", 2),
    ("torch_dtensor_tp.py:loss_parallel_tp", 2),
    ("torch_dtensor_tp.py:mesh_2d", 4),
    ("torch_collectives_megatron.py:functional", 2),
    ("torch_collectives_megatron.py:autograd_collectives", 2),
    ("torch_collectives_megatron.py:autograd_collectives_nccl", 2),
    ("torch_collectives_megatron.py:all_to_all_splits", 4),
    ("torch_collectives_megatron.py:objects", 4),
    ("torch_collectives_megatron.py:subgroups", 4),
    ("torch_collectives_megatron.py:p2p_batched_ring", 4),
    ("torch_collectives_megatron.py:seeded_ranks_agree", 2),
    ("torch_collectives_megatron.py:tagged", 2),
    ("torch_collectives_megatron.py:tagged_reversed", 2),
    ("torch_collectives_megatron.py:tags_under_nccl", 2),
]
SEEDS = range(3)


def _run(target: str, world_size: int, seeds: range) -> list:
    loaded = LoadedTarget(TargetSpec.parse(f"{REAL}/{target}"), "torch")
    framework = TorchFramework(world_size)
    with framework.activate():
        return [run_execution(loaded, framework, SeededChooser(seed)) for seed in seeds]


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list]]:
    """Every correct program run once per seed; the values of the last run kept per target."""
    import os

    results = {}
    for target, world_size in CORRECT:
        out = tmp_path_factory.mktemp(target.replace(":", "-").replace(".py", ""))
        os.environ["DNSSE_COMPARE_DIR"] = str(out)
        try:
            results[target] = (out, _run(target, world_size, SEEDS))
        finally:
            del os.environ["DNSSE_COMPARE_DIR"]
    return results


@pytest.mark.parametrize("target", [target for target, _ in CORRECT])
def test_the_correct_version_passes_on_every_schedule_tried(target: str, outcomes) -> None:
    for result in outcomes[target][1]:
        assert result.bug is None, result.bug.render()
        assert result.inconclusive is None, result.inconclusive


def test_ranks_seeded_alike_draw_alike_after_a_scheduling_point(outcomes) -> None:
    # Each rank is a process of its own under gloo: torch.manual_seed(0) gives every rank the same stream.
    out = outcomes["torch_collectives_megatron.py:seeded_ranks_agree"][0]
    ranks = [json.loads((out / f"seeded-rank{rank}.json").read_text()) for rank in range(2)]
    assert ranks[0] == ranks[1]


def test_nccl_ignores_tags_so_receives_take_the_messages_in_order(outcomes) -> None:
    out = outcomes["torch_collectives_megatron.py:tags_under_nccl"][0]
    received = json.loads((out / "tags_nccl-rank1.json").read_text())
    assert received == {"a": [2.0], "b": [1.0]}


@pytest.mark.parametrize("target", ["autograd_collectives", "autograd_collectives_nccl"])
def test_autograd_collectives_imported_by_a_rank_reach_each_ranks_own_group(target: str, outcomes) -> None:
    # y = all_reduce(2x) = 2 * (1 + 2); x's grad: 2 ranks' ones through all_reduce's backward (times 2),
    # plus the reduce-scatter of all_gather's backward, 2 * (rank + 1).
    out = outcomes[f"torch_collectives_megatron.py:{target}"][0]
    for rank in range(2):
        values = json.loads((out / f"dist_nn-rank{rank}.json").read_text())
        assert values == {"y": [6.0] * 3, "grad": [4.0 + 2 * (rank + 1)] * 3}


def test_monitored_barrier_without_a_timeout_never_expires_while_all_ranks_come() -> None:
    # torch hands the 30-minute default to the group; a rank merely slow to come is no bug.
    for result in _run("torch_collectives_megatron.py:subgroups", 4, range(3, 15)):
        assert result.bug is None, result.bug.render()


@pytest.mark.slow
@pytest.mark.gloo
def test_correct_versions_compute_what_real_gloo_computes(outcomes, tmp_path: Path) -> None:
    import torch

    compared = [target for target, world_size in CORRECT if world_size == 2 and "nccl" not in target]
    run_under_gloo(compared, 2, tmp_path)
    files = 0
    for target in compared:
        ours = outcomes[target][0]
        for mine_file in sorted(ours.glob("*.json")):
            mine = json.loads(mine_file.read_text())
            real = json.loads((tmp_path / mine_file.name).read_text())
            assert mine.keys() == real.keys()
            for key in mine:
                if isinstance(real[key], str):
                    assert mine[key] == real[key], f"{mine_file.name} {key}"
                    continue
                assert torch.allclose(torch.tensor(mine[key]).double(), torch.tensor(real[key]).double(),
                                      rtol=1e-5, atol=1e-6), f"{mine_file.name} {key}: dnsse {mine[key]} gloo {real[key]}"
            files += 1
    assert files >= 2 * len(compared) - 2  # every program but the ones saving on one rank
