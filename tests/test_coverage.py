"""Branch coverage of the target, as dnsse measures it, against coverage.py's own numbers."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from benchmarks.coverage_measure import coverage_py_branches
from dnsse.coverage.arcs import ArcRecorder, BranchCoverage, branch_coverage
from dnsse.campaign.config import CampaignConfig
from dnsse.campaign.run import run_campaign

# Loops, elif chains, exceptions, a generator, a comprehension and a thread.
PROGRAM = textwrap.dedent(
    """
    import threading

    results = []


    def classify(values):
        out = []
        for v in values:
            if v > 2:
                out.append("big")
            elif v < 0:
                out.append("negative")
            else:
                try:
                    1 / v
                except ZeroDivisionError:
                    out.append("zero")
        return out


    def odd(n):
        for i in range(n):
            if i % 2:
                yield i


    def worker():
        results.append(classify([0, 1, 5]))


    def main():
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        evens = [i for i in odd(5) if i > 1]
        assert results and evens == [3]
    """
)


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "program.py"
    path.write_text(PROGRAM, encoding="utf-8")
    return path


def test_recorder_matches_coverage_py_on_a_plain_run(tmp_path: Path) -> None:
    import sys
    import threading

    path = _write(tmp_path)
    reference = coverage_py_branches(path)
    recorder = ArcRecorder([str(path.resolve())])
    tracer = recorder.compose(None)
    namespace: dict = {"__name__": "program"}
    threading.settrace(tracer)
    sys.settrace(tracer)
    try:
        exec(compile(path.read_text(), str(path.resolve()), "exec"), namespace)
        namespace["main"]()
    finally:
        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type]
    assert recorder.coverage() == reference
    assert 0 < reference.branches_covered < reference.branches_total


def test_controlled_threads_campaign_reports_coverage_py_numbers(tmp_path: Path) -> None:
    path = _write(tmp_path)
    result = run_campaign(
        CampaignConfig(target=f"{path}:main", framework="threads", budget=3, out=tmp_path / "out", coverage=True)
    )
    assert not result.bugs
    assert result.coverage == coverage_py_branches(path)


def test_coverage_is_off_for_schedule_strategies_unless_asked(tmp_path: Path) -> None:
    path = _write(tmp_path)
    config = CampaignConfig(target=f"{path}:main", framework="threads", strategy="pct", budget=1, out=tmp_path / "out")
    assert run_campaign(config).coverage is None


def test_coverage_guided_strategies_measure_coverage_as_coverage_py_does(tmp_path: Path) -> None:
    path = _write(tmp_path)
    for strategy in ("fuzz", "symbolic", "hybrid"):
        config = CampaignConfig(
            target=f"{path}:main", framework="threads", strategy=strategy, budget=3, out=tmp_path / strategy
        )
        assert run_campaign(config).coverage == coverage_py_branches(path)


@pytest.mark.torch
def test_torch_ranks_are_traced(tmp_path: Path) -> None:
    path = tmp_path / "ranks.py"
    path.write_text(
        textwrap.dedent(
            """
            import torch
            import torch.distributed as dist


            def main(rank, world_size):
                t = torch.tensor([float(rank)])
                if rank == 0:
                    dist.send(t, dst=1)
                else:
                    dist.recv(t, src=0)
            """
        ),
        encoding="utf-8",
    )
    result = run_campaign(
        CampaignConfig(target=f"{path}:main", framework="torch", budget=2, out=tmp_path / "out", coverage=True)
    )
    # Both sides of the rank test ran, one on each rank.
    assert result.coverage == BranchCoverage(branches_total=2, branches_covered=2)


def test_percent_of_nothing_is_full() -> None:
    assert BranchCoverage(0, 0).percent == 100.0
    assert BranchCoverage(4, 1).as_json() == {"branches_total": 4, "branches_covered": 1, "percent": 25.0}


def test_branch_coverage_of_no_arcs_is_zero(tmp_path: Path) -> None:
    path = _write(tmp_path)
    assert branch_coverage(path, set()).branches_covered == 0
