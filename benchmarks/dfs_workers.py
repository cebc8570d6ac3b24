"""Executions to exhaust ``dfs`` with 1 and 2 worker processes (``--workers N``).

Each program is searched to the end by ``dnsse check --strategy dfs``, once
per number of workers. A divided search explores disjoint subtrees, so the
total stays the single-process count while the busiest worker runs about a
1/N share; seconds include starting the workers (each imports torch).

Run: .venv/bin/python benchmarks/dfs_workers.py [--workers 1 2]
Prints a Markdown table. The machine is shared, so compare executions, and
seconds only as ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = [
    ("tests/programs/threads_counter.py:locked", ["--preemption-bound", "2"], "threads, preemptions<=2"),
    ("tests/programs/dpor_torch.py:parameter_server", ["--world-size", "3"], "torch, 3 ranks, DPOR"),
    ("tests/programs/threads_counter.py:unlocked_global", [], "threads, DPOR, keep going"),
]


def exhaust(target: str, extra: list[str], workers: int) -> dict:
    with tempfile.TemporaryDirectory() as out:
        report = Path(out) / "r.json"
        subprocess.run(
            [sys.executable, "-m", "dnsse.cli", "check", f"{ROOT}/{target}", "--strategy", "dfs", "--budget", "100000",
             "--keep-going", "--workers", str(workers), "--quiet", "--out", out, "--json", str(report), *extra],
            capture_output=True, text=True, timeout=3600, env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        data = json.loads(report.read_text())
    return {
        "executions": data["executions"],
        "busiest": data.get("search", {}).get("busiest_worker_executions", data["executions"]),
        "seconds": data["elapsed_s"],
        "verified": data.get("verified") is not None,
        "bugs": len(data["bugs"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    arguments = parser.parse_args()
    print("| program | workers | executions to exhaust | busiest worker's executions | seconds | verified | bugs |")
    print("|---|---|---|---|---|---|---|")
    for target, extra, what in PROGRAMS:
        for workers in arguments.workers:
            row = exhaust(target, extra, workers)
            print(
                f"| `{target.split('/')[-1]}` ({what}) | {workers} | {row['executions']} | {row['busiest']} | "
                f"{row['seconds']:.1f} | {'yes' if row['verified'] else 'no'} | {row['bugs']} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
