"""The directed search with 1 and 2 worker processes at equal total executions (``--workers N``).

fuzz, symbolic and hybrid divide their work among workers (a sharded
corpus merged in rounds, see ``dnsse.search.corpus_share``). For each
benchmark program this runs, per strategy, number of workers and seed:

- the correct version with ``--coverage`` for the whole budget: branches covered;
- each seeded bug until its first bug within the same budget: found or not,
  and the execution number of the first bug (the workers run the execution
  numbers w, w+N, ..., so it counts the executions all workers ran).

Run: .venv/bin/python benchmarks/directed_workers.py [--programs llm_serving ddp_bucketed]
     [--strategies hybrid fuzz] [--workers 1 2] [--seeds 3] [--budget 300]
Prints a Markdown table. To measure the search without division (each
worker keeping a corpus of its own), run the same command with the
PYTHONPATH of an older checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.catalog import Program, Variant, program_named  # noqa: E402


def campaign(program: Program, variant: Variant, strategy: str, workers: int, seed: int, budget: int) -> dict:
    with tempfile.TemporaryDirectory() as out:
        report = Path(out) / "r.json"
        extra = ["--coverage", "--keep-going"] if variant.correct else []
        done = subprocess.run(
            [sys.executable, "-m", "dnsse.cli", "check", program.target(variant), "--strategy", strategy,
             "--world-size", str(program.world_size), "--framework", program.framework, "--budget", str(budget),
             "--seed", str(seed), "--workers", str(workers), "--no-minimize", "--quiet", "--out", out,
             "--json", str(report), *extra],
            capture_output=True, text=True, timeout=3600, env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        if not report.exists():
            raise RuntimeError(f"{program.target(variant)} failed: {done.stderr[-2000:]}")
        return json.loads(report.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", nargs="+", default=["llm_serving", "ddp_bucketed"])
    parser.add_argument("--strategies", nargs="+", default=["hybrid", "fuzz"])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budget", type=int, default=300)
    arguments = parser.parse_args()
    print(
        f"| program | strategy | workers | branches covered (correct version, median of {arguments.seeds} seeds) | "
        f"seeded bugs found (of seeds × bugs) | median execution of the first bug | seconds (median, correct version) |"
    )
    print("|---|---|---|---|---|---|---|")
    for name in arguments.programs:
        program = program_named(name)
        bugs = [variant for variant in program.variants if not variant.correct]
        correct = next(variant for variant in program.variants if variant.correct)
        for strategy in arguments.strategies:
            for workers in arguments.workers:
                covered, seconds, firsts, found = [], [], [], 0
                for seed in range(arguments.seeds):
                    data = campaign(program, correct, strategy, workers, seed, arguments.budget)
                    covered.append(data["coverage"]["branches_covered"])
                    seconds.append(data["elapsed_s"])
                    for variant in bugs:
                        data = campaign(program, variant, strategy, workers, seed, arguments.budget)
                        if data["bugs"]:
                            found += 1
                            firsts.append(data["bugs"][0]["execution"])
                median_first = f"{statistics.median(firsts):.0f}" if firsts else "-"
                print(
                    f"| {name} | {strategy} | {workers} | {statistics.median(covered):.0f} | "
                    f"{found}/{arguments.seeds * len(bugs)} | {median_first} | {statistics.median(seconds):.1f} |",
                    flush=True,
                )


if __name__ == "__main__":
    main()
