"""What coverage as feedback costs: executions/s with no coverage, with branch arcs, and with full feedback.

For the correct version of each benchmark program, the same executions
(the random strategy, one seed, so the same schedules) run three ways:

1. no coverage at all (what random, pct, pos and dfs run by default);
2. branch arcs recorded by the tracer of dnsse.coverage.arcs (``--coverage``);
3. full feedback, as fuzz, symbolic and hybrid run it: each execution's own
   arcs, normalized to new branches when it took a new arc, and the
   interleaving pairs of its history.

Python 3.11 has no sys.monitoring, so arcs come from a ``sys.settrace``
line tracer that is only installed in the frames of the target's own
files; every other frame costs one call of the global trace function.

Run: .venv/bin/python benchmarks/coverage_overhead.py [--executions 100] [--repeats 3]
Figures are medians of the repeats; the machine is shared, so compare ratios.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.catalog import PROGRAMS  # noqa: E402
from dnsse.campaign.campaign import Campaign, CampaignConfig  # noqa: E402
from dnsse.search.random_walk import RandomStrategy  # noqa: E402

MODES = ("none", "arcs", "feedback")


def executions_per_second(target: str, world_size: int, mode: str, executions: int) -> float:
    config = CampaignConfig(target=target, world_size=world_size, strategy="random", coverage=mode == "arcs")
    campaign = Campaign(config, feedback=mode == "feedback")
    strategy = RandomStrategy(seed=1)
    with campaign.framework.activate():
        campaign.prepare()
        campaign.execute(strategy.chooser_for(0))  # warm caches (imports, coverage's static analysis)
        started = time.perf_counter()
        for index in range(executions):
            campaign.execute(strategy.chooser_for(index))
        return executions / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executions", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    arguments = parser.parse_args()
    print("| program | no coverage (ex/s) | branch arcs (ex/s) | full feedback (ex/s) | arcs overhead | feedback overhead |")
    print("|---|---:|---:|---:|---:|---:|")
    for program in PROGRAMS:
        target = f"{program.path}:main_correct"
        rates = {
            mode: statistics.median(
                executions_per_second(target, program.world_size, mode, arguments.executions)
                for _ in range(arguments.repeats)
            )
            for mode in MODES
        }
        base = rates["none"]
        print(
            f"| {program.name} | {base:.0f} | {rates['arcs']:.0f} | {rates['feedback']:.0f} "
            f"| {100 * (base / rates['arcs'] - 1):+.0f}% | {100 * (base / rates['feedback'] - 1):+.0f}% |",
            flush=True,
        )


if __name__ == "__main__":
    main()
