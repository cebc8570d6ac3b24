"""Does the default portfolio ever lose badly? Executions to the first bug, per strategy, on small classic bugs.

Each strategy checks each program of ``benchmarks/classic/`` with seeds
``0..seeds-1`` (``dfs`` once: it has no seed), in this process, without
minimization, and the table gives the median number of executions to the
first bug (a campaign that found none counts as budget + 1). The portfolio
bound: ``hybrid``'s median is at most twice the best single strategy's plus
two. Counts of executions, not times, so the result is the same on any
machine.

Run: .venv/bin/python benchmarks/portfolio.py [--seeds 5] [--budget 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
if __package__ in (None, ""):
    sys.path.insert(0, str(HERE.parent))

from dnsse.campaign.run import run_campaign  # noqa: E402
from dnsse.campaign.config import CampaignConfig

CLASSIC = HERE / "classic"
BUGS = {
    "lock-order deadlock": f"{CLASSIC / 'threads_bugs.py'}:lock_order_deadlock",
    "lazy init": f"{CLASSIC / 'threads_bugs.py'}:lazy_init",
    "lost update": f"{CLASSIC / 'threads_bugs.py'}:lost_update",
    "missed notify": f"{CLASSIC / 'threads_bugs.py'}:missed_notify",
    "retry double count": f"{CLASSIC / 'ray_bugs.py'}:retry_double_count",
}
SINGLE = ("random", "pct", "pos", "dfs", "fuzz", "symbolic")


@dataclass
class Row:
    bug: str
    medians: dict[str, float]

    @property
    def best_single(self) -> tuple[str, float]:
        name = min(SINGLE, key=lambda strategy: self.medians[strategy])
        return name, self.medians[name]

    @property
    def bound(self) -> float:
        return 2 * self.best_single[1] + 2

    @property
    def within_bound(self) -> bool:
        return self.medians["hybrid"] <= self.bound


def executions_to_first_bug(target: str, strategy: str, seed: int, budget: int) -> int:
    with tempfile.TemporaryDirectory() as out:
        config = CampaignConfig(target=target, strategy=strategy, seed=seed, budget=budget, out=Path(out), minimize=False)
        result = run_campaign(config)
    return result.bugs[0].execution if result.bugs else budget + 1


def measure(bug: str, seeds: int = 5, budget: int = 200) -> Row:
    target = BUGS[bug]
    medians = {}
    for strategy in (*SINGLE, "hybrid"):
        runs = [executions_to_first_bug(target, strategy, seed, budget) for seed in range(1 if strategy == "dfs" else seeds)]
        medians[strategy] = statistics.median(runs)
    return Row(bug, medians)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=200)
    arguments = parser.parse_args()
    columns = (*SINGLE, "hybrid")
    print(f"{'bug':<22}" + "".join(f"{name:>10}" for name in columns) + f"{'bound':>8}  verdict")
    failed = False
    for bug in BUGS:
        row = measure(bug, arguments.seeds, arguments.budget)
        failed |= not row.within_bound
        cells = "".join(f"{row.medians[name]:>10g}" for name in columns)
        print(f"{bug:<22}{cells}{row.bound:>8g}  {'ok' if row.within_bound else 'LOSES BADLY'}")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
