"""Speed of parallel campaigns: ``--workers 1`` against ``--workers N`` on one machine.

The campaign runs a bug-free 2-rank program with ten collectives
(``speed/ten_collectives.py``) for a fixed budget, so every run does the same
work. Two figures per worker count:

1. executions/s over the whole campaign, worker start-up included (each
   spawned worker imports torch anew, a few seconds);
2. executions/s after start-up: from the first execution reported to the
   last, which is what a long campaign converges to.

Run: .venv/bin/python benchmarks/parallel_speed.py [--budget 600] [--repeats 3] [--workers 2]
Figures are medians of the repeats. The speed-up cannot exceed the number of
cores (``os.cpu_count()`` is printed), and the machine may be shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "speed" / "ten_collectives.py"


@dataclass
class Run:
    total_per_s: float
    steady_per_s: float


def campaign_speed(workers: int, budget: int) -> Run:
    from dnsse.search.campaign import CampaignConfig, run_campaign

    reported: list[float] = []
    with tempfile.TemporaryDirectory(prefix="dnsse-parallel-") as out:
        config = CampaignConfig(
            target=f"{PROGRAM}:main", strategy="pct", budget=budget, out=Path(out), workers=workers
        )
        started = time.perf_counter()
        result = run_campaign(config, on_execution=lambda number, run, arcs: reported.append(time.perf_counter()))
        total = time.perf_counter() - started
    assert not result.bugs and result.executions == budget, (result.bugs, result.executions)
    return Run(budget / total, (len(reported) - 1) / (reported[-1] - reported[0]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=600)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2, help="the parallel worker count to compare with 1")
    arguments = parser.parse_args()

    print(f"## Parallel campaign: {arguments.budget} executions of a 2-rank program, {os.cpu_count()} cores\n")
    print("| workers | executions/s, start-up included | executions/s after start-up | speed-up after start-up |")
    print("|---:|---:|---:|---:|")
    baseline = None
    for workers in (1, arguments.workers):
        runs = [campaign_speed(workers, arguments.budget) for _ in range(arguments.repeats)]
        total = statistics.median(run.total_per_s for run in runs)
        steady = statistics.median(run.steady_per_s for run in runs)
        baseline = baseline or steady
        print(f"| {workers} | {total:,.0f} | {steady:,.0f} | {steady / baseline:.2f}x |")


if __name__ == "__main__":
    main()
