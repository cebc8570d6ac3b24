"""CPU time of one execution of the speed programs, and of one scheduling point, through ``run_execution``.

The programs are those of ``benchmarks/speed/`` that ``frontrun_compare.py``
runs against frontrun (a locked lazy initialisation, a two-lock transfer),
the Ray program of ``ray_speed.py``, and the two-rank torch programs: the
ten-collective program of ``engine_speed.py`` and ranks that return at once
(the fixed cost of a torch execution: rank threads, module copies, default
groups, isolation, teardown; the rest of the ten-collective program's time
is its steps). Each runs with random schedules in this process, as a
campaign runs them (no supervising process, no report).
Times are the process's CPU time (``time.process_time``): only one agent
runs at a time, so on an idle core that is the wall time, and on this
loaded machine it leaves out the waits for a core. Each figure is the
median of ``--repeats`` rounds, the measures taking turns within a round.

To compare two versions of dnsse, run this script with each one's ``src``
first on ``PYTHONPATH``, alternately, and compare the medians.

Run: .venv/bin/python benchmarks/cpu_per_execution.py [--executions 300] [--repeats 5] [--only torch]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
if __package__ in (None, ""):
    sys.path.insert(0, str(HERE.parent))

from benchmarks.cost_model import cpu_seconds_per_execution  # noqa: E402
THREADS_PROGRAMS = {
    "locked lazy init": HERE / "speed" / "locked_lazy_init.py",
    "two-lock transfer": HERE / "speed" / "two_lock_transfer.py",
}


TORCH_PROGRAMS = {
    "torch, ten collectives, 2 ranks": f"{HERE / 'speed' / 'ten_collectives.py'}:main",
    "torch, ranks that return at once (fixed cost), 2 ranks": f"{HERE / 'speed' / 'empty.py'}:torch_main",
}


def ms_per_execution(target_text: str, framework_name: str, executions: int, world_size: int = 1) -> float:
    return 1000 * cpu_seconds_per_execution(target_text, framework_name, world_size, executions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executions", type=int, default=300, help="executions per measure and round")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", default="", help="measure only the programs whose name contains this text")
    arguments = parser.parse_args()
    n = arguments.executions
    measures: dict[str, Callable[[], float]] = {
        name: lambda path=path: ms_per_execution(f"{path}:main", "threads", n) for name, path in THREADS_PROGRAMS.items()
    }
    measures["Ray program of ray_speed.py"] = lambda: ms_per_execution(f"{HERE / 'ray_speed.py'}:program", "ray", max(10, n // 5))
    for name, target in TORCH_PROGRAMS.items():
        measures[name] = lambda target=target: ms_per_execution(target, "torch", max(10, n // 2), world_size=2)
    measures = {name: measure for name, measure in measures.items() if arguments.only in name}
    samples: dict[str, list[float]] = {name: [] for name in measures}
    for _ in range(arguments.repeats):
        for name, measure in measures.items():
            samples[name].append(measure())
    print(f"Median of {arguments.repeats} rounds, CPU time.\n")
    print("| program | CPU ms per execution | executions per CPU second |")
    print("|---|---:|---:|")
    for name, values in samples.items():
        ms = statistics.median(values)
        print(f"| {name} | {ms:.2f} | {1000 / ms:,.0f} |")


if __name__ == "__main__":
    main()
