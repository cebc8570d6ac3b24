"""What containment costs: the flight recorder per execution, and the supervised process per campaign.

``dnsse check`` runs its executions in a supervised child process with a
flight recorder (see dnsse.campaign.supervisor). This measures, on one threads
program (two threads, a lock, a shared counter: many scheduling points):

1. executions per second in-process, without and with the flight recorder
   (the per-execution cost: a few bytes per choice and per step);
2. the fixed cost of supervision: wall time of ``dnsse check --budget 1``
   against the same campaign run in-process (one extra process start);
3. the cost of replacing the process after a crash: ``--keep-going`` on a
   program whose every execution crashes, per execution, in one process and
   with ``--workers 2`` (a dead worker is replaced by a fresh one).

Run: .venv/bin/python benchmarks/containment_cost.py [--executions 300] [--repeats 3] [--write]
Figures are medians of the repeats; the machine is shared, so compare ratios.
``--write`` also writes them to benchmarks/results/containment.md, which
BENCHMARKS.md includes when it is regenerated.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = ROOT / "tests" / "hostile" / "targets" / "slow.py"
CRASHING = ROOT / "tests" / "hostile" / "targets" / "crashes.py"


def in_process_rate(executions: int, recorded: bool) -> float:
    """Executions per second of an in-process campaign, with or without the flight recorder."""
    from dnsse.engine.flight import FlightRecorder
    from dnsse.engine.execution import Limits
    from dnsse.campaign.config import CampaignConfig
    from dnsse.campaign.run import run_campaign
    from dnsse.campaign.control import CampaignControl

    with tempfile.TemporaryDirectory() as directory:
        config = CampaignConfig(
            target=f"{PROGRAM}:racy", strategy="random", budget=executions, keep_going=True,
            out=Path(directory) / "out", minimize=False, inputs={"rounds": "20"}, limits=Limits(),
        )
        recorder = FlightRecorder(Path(directory) / "flight", 1_000_000) if recorded else None
        control = CampaignControl(config.out, recorder=recorder, saving=False)
        started = time.perf_counter()
        result = run_campaign(config, control=control)
        elapsed = time.perf_counter() - started
    return result.executions / elapsed


def cli_seconds(*arguments: str) -> float:
    with tempfile.TemporaryDirectory() as directory:
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "dnsse.cli", "check", *arguments, "--out", directory, "--quiet"],
            capture_output=True, check=False, env={**os.environ},
        )
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executions", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="also write benchmarks/results/containment.md")
    options = parser.parse_args()
    plain = statistics.median(in_process_rate(options.executions, False) for _ in range(options.repeats))
    recorded = statistics.median(in_process_rate(options.executions, True) for _ in range(options.repeats))
    target = f"{PROGRAM}:racy"
    supervised = statistics.median(
        cli_seconds(target, "--strategy", "random", "--budget", "1", "--input", "rounds=20")
        for _ in range(options.repeats)
    )
    crashes = 5
    restarts = statistics.median(
        cli_seconds(f"{CRASHING}:killed", "--keep-going", "--budget", str(crashes)) for _ in range(options.repeats)
    )
    replaced = statistics.median(
        cli_seconds(
            f"{CRASHING}:sometimes_exits", "--input", "flag=True", "--keep-going", "--budget", str(crashes),
            "--workers", "2", "--strategy", "random",
        )
        for _ in range(options.repeats)
    )
    rows = [
        ("in-process, no flight recorder (no containment)", f"{plain:.1f} executions/s"),
        (
            "in-process, with the flight recorder (what a supervised process runs)",
            f"{recorded:.1f} executions/s ({(1 / recorded - 1 / plain) * 1e6:+.0f} us per execution, "
            f"{plain / recorded - 1:+.1%})",
        ),
        ("`dnsse check --budget 1`: supervisor + child process, wall", f"{supervised:.2f}s"),
        ("a crash in every execution, `--keep-going` (a fresh process each)", f"{restarts / crashes:.2f}s per execution"),
        (
            "a crash in every execution, `--keep-going --workers 2` (a fresh worker each)",
            f"{replaced / crashes:.2f}s per execution",
        ),
    ]
    text = _table(rows, options)
    print(text)
    if options.write:
        (ROOT / "benchmarks" / "results" / "containment.md").write_text(text, encoding="utf-8")


def _table(rows: list[tuple[str, str]], options: argparse.Namespace) -> str:
    lines = [
        "## Containment cost",
        "",
        f"`python benchmarks/containment_cost.py --executions {options.executions} --repeats {options.repeats}`: "
        "a threads program with two threads, a lock and a shared counter (many scheduling points), "
        f"medians of {options.repeats} runs on this shared machine.",
        "",
        "| measure | result |",
        "|---|---|",
        *[f"| {name} | {value} |" for name, value in rows],
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
