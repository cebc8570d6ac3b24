"""Executions to exhaust ``dfs`` with 1 and 2 worker processes (``--workers N``).

Each program is searched to the end by ``dnsse check --strategy dfs``, once
per number of workers. A divided search explores disjoint subtrees, so the
total stays the single-process count while the busiest worker runs about a
1/N share; seconds include starting the workers (each imports torch).

With ``--ray``, the same on a local Ray cluster started here (``--ray-address``,
each task a slice of the tree; ``--workers`` Ray workers).

Run: .venv/bin/python benchmarks/dfs_workers.py [--workers 1 2] [--ray] [--programs N ...]
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


def exhaust(target: str, extra: list[str], workers: int, ray_address: str | None = None) -> dict:
    with tempfile.TemporaryDirectory() as out:
        report = Path(out) / "r.json"
        subprocess.run(
            [sys.executable, "-m", "dnsse.cli", "check", f"{ROOT}/{target}", "--strategy", "dfs", "--budget", "100000",
             "--keep-going", "--workers", str(workers), "--quiet", "--out", out, "--json", str(report), *extra,
             *(["--ray-address", ray_address] if ray_address else [])],
            capture_output=True, text=True, timeout=3600,
            env={**os.environ, "PYTHONHASHSEED": "0", "RAY_AUTH_MODE": "disabled"},
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
    parser.add_argument("--ray", action="store_true", help="on a local Ray cluster started by this script")
    parser.add_argument("--programs", type=int, nargs="+", default=list(range(len(PROGRAMS))), help="by position")
    arguments = parser.parse_args()
    rows = {}
    for workers in arguments.workers:
        address = _cluster(workers) if arguments.ray else None
        for position in arguments.programs:
            target, extra, _ = PROGRAMS[position]
            rows[position, workers] = exhaust(target, extra, workers, address)
        if arguments.ray:
            import ray

            ray.shutdown()
    print("| program | workers | executions to exhaust | busiest worker's executions | seconds | verified | bugs |")
    print("|---|---|---|---|---|---|---|")
    for position in arguments.programs:
        target, _, what = PROGRAMS[position]
        for workers in arguments.workers:
            row = rows[position, workers]
            print(
                f"| `{target.split('/')[-1]}` ({what}) | {workers} | {row['executions']} | {row['busiest']} | "
                f"{row['seconds']:.1f} | {'yes' if row['verified'] else 'no'} | {row['bugs']} |",
                flush=True,
            )


def _cluster(workers: int) -> str:
    """A local Ray cluster of ``workers`` CPUs, so that --workers 1 means one Ray worker; its address."""
    import ray

    os.environ["RAY_AUTH_MODE"] = "disabled"
    ray.init(address="local", num_cpus=workers, include_dashboard=False, log_to_driver=False)
    return ray.get_runtime_context().gcs_address


if __name__ == "__main__":
    main()
