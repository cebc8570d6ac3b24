"""fuzz, symbolic and hybrid: what direction finds that random search does not."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from dnsse.campaign.config import CampaignConfig
from dnsse.campaign.run import run_campaign
from tests.helpers import PROGRAMS


def first_bug(target: str, strategy: str, budget: int, tmp_path: Path, seed: int = 0, world_size: int = 2) -> int | None:
    """The execution (from 1) of the first bug of a campaign, or None within the budget."""
    result = run_campaign(
        CampaignConfig(
            target=str(PROGRAMS / target), strategy=strategy, budget=budget, seed=seed,
            world_size=world_size, out=tmp_path / f"{strategy}-{seed}", minimize=False,
        )
    )
    return result.bugs[0].execution if result.bugs else None


def test_symbolic_solves_an_integer_equality_over_two_inputs_that_random_misses(tmp_path: Path) -> None:
    assert first_bug("directed_inputs.py:pair_equal", "symbolic", 10, tmp_path) is not None
    assert first_bug("directed_inputs.py:pair_equal", "random", 1000, tmp_path) is None


def test_symbolic_solves_a_narrow_band_with_floor_division_and_modulo(tmp_path: Path) -> None:
    assert first_bug("directed_inputs.py:narrow_band", "symbolic", 10, tmp_path) is not None
    assert first_bug("directed_inputs.py:narrow_band", "random", 1000, tmp_path) is None


@pytest.mark.slow
def test_symbolic_reaches_an_item_overflow_on_one_rank_only(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", f"{PROGRAMS / 'directed_torch.py'}:overflow",
         "--strategy", "symbolic", "--budget", "10", "--out", str(tmp_path), "--json", str(report)],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    (bug,) = json.loads(report.read_text())["bugs"]
    assert bug["kind"] == "collective_mismatch"
    # Rank 1's gradients are twice rank 0's: only scales in (16376, 32752] overflow rank 1 alone.
    assert 65504.0 / 4 < bug["inputs"]["scale"] <= 65504.0 / 2
    engines = json.loads(report.read_text())["engines"]["symbolic"]
    assert engines["confirmed"] >= 1 and engines["queries"] >= 1
    replayed = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "replay", bug["trace"]], capture_output=True, text=True, timeout=600
    )
    assert replayed.returncode == 1 and "reproduced" in replayed.stdout


def test_symbolic_follows_tensor_inputs_through_elementwise_ops_and_reductions(tmp_path: Path) -> None:
    assert first_bug("directed_torch.py:overflow_tensor", "symbolic", 10, tmp_path) is not None


def test_fuzz_finds_a_deep_ordering_bug_in_fewer_executions_than_random(tmp_path: Path) -> None:
    fuzz = [first_bug("directed_inputs.py:staged", "fuzz", 3000, tmp_path, seed) for seed in range(2)]
    random = [first_bug("directed_inputs.py:staged", "random", 3000, tmp_path, seed) for seed in range(2)]
    assert None not in fuzz
    assert statistics.median(fuzz) < statistics.median(x if x is not None else 3001 for x in random)


def test_hybrid_finds_a_bug_that_needs_an_input_value_and_an_ordering(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", f"{PROGRAMS / 'directed_inputs.py'}:pool_race",
         "--budget", "1000", "--out", str(tmp_path), "--json", str(report)],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    data = json.loads(report.read_text())
    assert data["strategy"] == "hybrid"
    assert data["bugs"][0]["inputs"] == {"free_blocks": 1}
    assert set(data["engines"]) == {"random", "race-directed", "pos", "pct-shallow", "fuzz", "symbolic", "pct", "advisor"}
    assert sum(engine["executions"] for engine in data["engines"].values()) == data["executions"]
    assert first_bug("directed_inputs.py:pool_race", "random", 1000, tmp_path) is None
