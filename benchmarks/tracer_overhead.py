"""sys.monitoring against sys.settrace (CPython 3.12+): CPU time per execution, same executions.

For each torch-free benchmark program (its correct version), the same random
executions (one seed, so the same schedules) run in alternating rounds:

- ``none``: no coverage;
- ``arcs settrace``, ``arcs monitoring``: branch arcs (``--coverage``) recorded
  by the settrace recorder and by the ``sys.monitoring`` one;
- ``points settrace``, ``points monitoring`` (threads programs, 3.13+ only:
  3.12.1's settrace misses opcode events, so there points always come from
  ``sys.monitoring``): no coverage, shared-state points from each mechanism.

``DNSSE_TRACER=settrace`` selects settrace for both coverage and points, so
the ``arcs`` rows are measured on 3.12 (where points stay on monitoring) and
the ``points`` rows on 3.13 without coverage.

Run: .venv312/bin/python benchmarks/tracer_overhead.py [--executions 40] [--rounds 5] [--only NAME ...]
Figures are CPU milliseconds per execution (process time: every agent's
thread, whatever else shares the machine), medians over the rounds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.catalog import PROGRAMS  # noqa: E402
from dnsse.campaign.campaign import Campaign, CampaignConfig  # noqa: E402
from dnsse.search.random_walk import RandomStrategy  # noqa: E402

SPEED = HERE / "speed"
THREADS = [(f"{SPEED / 'locked_lazy_init.py'}:main", "locked_lazy_init"),
           (f"{SPEED / 'two_lock_transfer.py'}:main", "two_lock_transfer")]


def cpu_ms_per_execution(target: str, tracer: str, coverage: bool, executions: int) -> float:
    os.environ["DNSSE_TRACER"] = tracer
    campaign = Campaign(CampaignConfig(target=target, strategy="random", coverage=coverage))
    strategy = RandomStrategy(seed=1)
    with campaign.framework.activate():
        campaign.prepare()
        campaign.execute(strategy.chooser_for(0))  # warm caches (imports, static analysis, instrumentation)
        started = time.process_time()
        for index in range(executions):
            campaign.execute(strategy.chooser_for(index))
        return (time.process_time() - started) * 1000 / executions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executions", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", nargs="*", help="program names to measure (default: all torch-free ones)")
    arguments = parser.parse_args()
    if not hasattr(sys, "monitoring"):
        raise SystemExit("sys.monitoring needs Python 3.12+")
    modes = {"none": ("monitoring", False), "arcs settrace": ("settrace", True), "arcs monitoring": ("monitoring", True)}
    points = {"points settrace": ("settrace", False), "points monitoring": ("monitoring", False)}
    programs = [(f"{p.path}:main_correct", p.name) for p in PROGRAMS if p.framework != "torch"] + THREADS
    if arguments.only:
        programs = [(target, name) for target, name in programs if name in arguments.only]
    version = ".".join(map(str, sys.version_info[:3]))
    print(f"Python {version}, {arguments.executions} executions, {arguments.rounds} alternating rounds, CPU ms/execution")
    for target, name in programs:
        wanted = dict(modes)
        if sys.version_info >= (3, 13) and "ray" not in target:
            wanted.update(points)
        samples: dict[str, list[float]] = {mode: [] for mode in wanted}
        try:
            for _ in range(arguments.rounds):
                for mode, (tracer, coverage) in wanted.items():
                    samples[mode].append(cpu_ms_per_execution(target, tracer, coverage, arguments.executions))
        except Exception as error:  # noqa: BLE001 - a program this Python cannot run (torch) is reported, not fatal
            print(f"{name}: skipped ({type(error).__name__}: {error})")
            continue
        medians = {mode: statistics.median(values) for mode, values in samples.items()}
        row = ", ".join(f"{mode} {value:.2f}" for mode, value in medians.items())
        arcs = (medians["arcs settrace"] - medians["none"]) / max(medians["arcs monitoring"] - medians["none"], 1e-9)
        print(f"{name}: {row}; arcs overhead settrace/monitoring {arcs:.1f}x", flush=True)


if __name__ == "__main__":
    main()
