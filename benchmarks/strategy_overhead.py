"""CPU time per execution of each strategy on the same programs: what a strategy costs over plain random.

Every strategy runs the same correct programs of ``benchmarks/speed/`` in
this process (``run_campaign``, no supervising process, no report), with
the same budget, and the table gives CPU milliseconds per execution, the
median of ``--repeats`` rounds taken in turn, and the ratio to ``random``.
What a strategy adds to an execution's own cost is its bookkeeping between
executions: the hybrid's bandit, the advisor's summary and hints, the fuzzer's
corpus, the solver. It grows with the campaign when that bookkeeping does,
so measure at the budget a campaign runs.

To compare two versions of dnsse, run this script with each one's ``src``
first on ``PYTHONPATH``, alternately, and compare the medians.

Run: .venv/bin/python benchmarks/strategy_overhead.py [--executions 200] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if __package__ in (None, ""):
    sys.path.insert(0, str(HERE.parent))

from dnsse.campaign.run import run_campaign  # noqa: E402
from dnsse.campaign.config import CampaignConfig

PROGRAMS = {
    "locked lazy init": HERE / "speed" / "locked_lazy_init.py",
    "thread pool counter": HERE / "speed" / "pool_counter.py",
}
STRATEGIES = ("random", "pct", "fuzz", "symbolic", "llm", "hybrid")


def ms_per_execution(program: Path, strategy: str, executions: int) -> float:
    with tempfile.TemporaryDirectory() as out:
        config = CampaignConfig(
            target=f"{program}:main", framework="threads", strategy=strategy, budget=executions,
            out=Path(out), minimize=False,
        )
        start = time.process_time()
        result = run_campaign(config)
        spent = time.process_time() - start
    if result.bugs:
        raise SystemExit(f"{program.name} under {strategy} found a bug; the benchmark's programs are correct")
    return 1000 * spent / result.executions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executions", type=int, default=200, help="executions per campaign")
    parser.add_argument("--repeats", type=int, default=3)
    arguments = parser.parse_args()
    samples: dict[tuple[str, str], list[float]] = {}
    for _ in range(arguments.repeats):
        for name, program in PROGRAMS.items():
            for strategy in STRATEGIES:
                samples.setdefault((name, strategy), []).append(
                    ms_per_execution(program, strategy, arguments.executions)
                )
    print(f"Median of {arguments.repeats} rounds, CPU ms per execution, {arguments.executions} executions a campaign.\n")
    print("| program | strategy | CPU ms per execution | against random |")
    print("|---|---|---:|---:|")
    for name in PROGRAMS:
        base = statistics.median(samples[(name, "random")])
        for strategy in STRATEGIES:
            ms = statistics.median(samples[(name, strategy)])
            print(f"| {name} | {strategy} | {ms:.2f} | {ms / base:.1f}x |")


if __name__ == "__main__":
    main()
