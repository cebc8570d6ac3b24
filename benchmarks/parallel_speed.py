"""Speed of parallel campaigns: ``--workers 1`` against ``--workers N`` on one machine.

The campaign runs a bug-free 2-rank program with ten collectives
(``speed/ten_collectives.py``) for a fixed budget, so every run does the same
work. Each campaign runs in a fresh process, as each ``dnsse check`` does, so
nothing a former campaign started (a fork server, imported modules) is
reused; the worker counts alternate, so a load that comes and goes falls on
both. Two figures per worker count:

1. executions/s over the whole campaign, worker start-up included: from the
   call of ``run_campaign`` to its return, in a process that has imported
   torch and dnsse (as the command line has by the time the campaign starts,
   whatever the number of workers), so it holds everything ``--workers``
   adds: starting the fork server and the workers, loading the target in
   each, and collecting their reports;
2. executions/s after start-up: from the first execution reported to the
   last, which is what a long campaign converges to.

Before the runs, dnsse's modules are compiled to bytecode (``compileall``),
as an installed package's are: run from a source tree with
``PYTHONDONTWRITEBYTECODE=1``, every campaign would otherwise compile them
again, and the modules a campaign imports lazily (the strategy, the parallel
parent's, the worker's) would be compiled in its start-up.

On a shared machine the wall-clock ratio depends on what else runs: with
other jobs busy, two workers get a larger share of the cores than one
process, and the ratio can pass the number of cores. The CPU seconds of
each campaign (this process's, and its workers' as the fork server reaped
them, from ``/proc``) depend little on the load: CPU against 1 worker is
what ``--workers`` adds for the same executions, and 2 cores idle could run
two workers at most cores / that ratio times as fast.

Run: .venv/bin/python benchmarks/parallel_speed.py [--budget 600] [--repeats 3] [--workers 2]
Figures are medians of the repeats; each repeat runs one worker then N back
to back, and the median of those paired ratios is printed too. The
speed-up cannot exceed the number of cores (``os.cpu_count()`` is printed),
and the machine may be shared: the load average before and after is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
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
    cpu_s: float  # CPU seconds of the campaign: this process's, and its workers' where /proc says


def _workers_cpu_s() -> float:
    """CPU seconds of the fork server's ended children (the workers it forked and reaped), from /proc.

    0 where there is no fork server of this process (one worker) or no /proc.
    """
    from multiprocessing import forkserver

    pid = forkserver._forkserver._forkserver_pid  # type: ignore[attr-defined]
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    # Fields 16 and 17 of stat (cutime, cstime), counted after the command's closing parenthesis.
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def campaign_speed(workers: int, budget: int) -> Run:
    """One campaign in this process (the process of ``--one``)."""
    import torch  # noqa: F401 - imported before timing, as the command line's campaign has it by then

    from dnsse.campaign.config import CampaignConfig
    from dnsse.campaign.run import run_campaign
    from dnsse.campaign.fork_server import fork_this_process

    fork_this_process()  # as the command line's check does
    reported: list[float] = []
    with tempfile.TemporaryDirectory(prefix="dnsse-parallel-") as out:
        config = CampaignConfig(
            target=f"{PROGRAM}:main", strategy="pct", budget=budget, out=Path(out), workers=workers
        )
        started, cpu = time.perf_counter(), time.process_time()
        result = run_campaign(config, on_execution=lambda number, run, arcs: reported.append(time.perf_counter()))
        total, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert not result.bugs and result.executions == budget, (result.bugs, result.executions)
    # The workers have all been joined, so the server has reaped them: their CPU is its children's.
    return Run(budget / total, (len(reported) - 1) / (reported[-1] - reported[0]), cpu + _workers_cpu_s())


def fresh_campaign_speed(workers: int, budget: int) -> Run:
    """One campaign in a fresh process."""
    command = [sys.executable, __file__, "--one", str(workers), "--budget", str(budget)]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return Run(**json.loads(output.splitlines()[-1]))


def _compile_dnsse() -> None:
    """Write the bytecode caches of dnsse's modules (an installed package has them)."""
    import dnsse

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(dnsse.__file__).parent)], capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=600)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2, help="the parallel worker count to compare with 1")
    parser.add_argument("--one", type=int, metavar="WORKERS", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.one is not None:
        print(json.dumps(campaign_speed(arguments.one, arguments.budget).__dict__))
        return

    _compile_dnsse()
    counts = (1, arguments.workers)
    load_before = os.getloadavg()[0]
    runs: dict[int, list[Run]] = {count: [] for count in counts}
    for _ in range(arguments.repeats):
        for count in counts:
            runs[count].append(fresh_campaign_speed(count, arguments.budget))
    load_after = os.getloadavg()[0]

    print(f"## Parallel campaign: {arguments.budget} executions of a 2-rank program, {os.cpu_count()} cores")
    print(f"load average (1 min) {load_before:.2f} before, {load_after:.2f} after; medians of {arguments.repeats}\n")
    print(
        "| workers | executions/s, start-up included | executions/s after start-up | speed-up, start-up included "
        "| after start-up | CPU s of the campaign (all processes) | CPU against 1 worker |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    base_total = statistics.median(run.total_per_s for run in runs[1])
    base_steady = statistics.median(run.steady_per_s for run in runs[1])
    base_cpu = statistics.median(run.cpu_s for run in runs[1])
    for count in counts:
        total = statistics.median(run.total_per_s for run in runs[count])
        steady = statistics.median(run.steady_per_s for run in runs[count])
        cpu = statistics.median(run.cpu_s for run in runs[count])
        print(
            f"| {count} | {total:,.0f} | {steady:,.0f} | {total / base_total:.2f}x | {steady / base_steady:.2f}x "
            f"| {cpu:.2f} | {cpu / base_cpu:.2f}x |"
        )
    paired = [pair.total_per_s / one.total_per_s for one, pair in zip(runs[1], runs[arguments.workers])]
    paired_steady = [pair.steady_per_s / one.steady_per_s for one, pair in zip(runs[1], runs[arguments.workers])]
    print(
        f"\nmedian of the paired ratios (each repeat's {arguments.workers} workers against its 1): "
        f"{statistics.median(paired):.2f}x start-up included, {statistics.median(paired_steady):.2f}x after start-up"
    )
    for count in counts:
        print(f"workers {count}, each run (start-up included):", ", ".join(f"{run.total_per_s:,.0f}" for run in runs[count]))


if __name__ == "__main__":
    main()
