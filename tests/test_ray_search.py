"""Systematic search over Ray programs: every bug is found, correct versions are verified.

dfs trusts the objects each step names; these tests check that the Ray
runtime names enough of them (actor state, refs, event loops) for partial-order
reduction to be sound on these programs, fault choices included.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import PROGRAMS

from dnsse.campaign.config import CampaignConfig
from dnsse.campaign.run import run_campaign


def dfs(spec: str, out: Path, faults: bool = True):  # type: ignore[no-untyped-def]
    config = CampaignConfig(
        target=f"{PROGRAMS / spec}", strategy="dfs", budget=600, out=out, minimize=False, faults=faults
    )
    return run_campaign(config)


@pytest.mark.parametrize(
    "spec",
    [
        "ray_param_server.py:lost_update",
        "ray_threaded.py:oversold",
        "ray_retries.py:double_payment",
        "ray_mutual.py:deadlock",
    ],
)
def test_dfs_finds_the_bug(spec: str, tmp_path: Path) -> None:
    assert len(dfs(spec, tmp_path).bugs) == 1


@pytest.mark.parametrize(
    "spec",
    [
        "ray_param_server.py:locked_update",
        "ray_threaded.py:guarded",
        "ray_retries.py:idempotent_payment",
        "ray_mutual.py:no_deadlock",
    ],
)
def test_dfs_verifies_the_correct_version(spec: str, tmp_path: Path) -> None:
    result = dfs(spec, tmp_path)
    assert result.bugs == [] and result.verified is not None


def test_without_faults_dfs_verifies_the_program_whose_only_bug_is_a_retry(tmp_path: Path) -> None:
    result = dfs("ray_retries.py:double_payment", tmp_path, faults=False)
    assert result.bugs == [] and result.verified is not None
