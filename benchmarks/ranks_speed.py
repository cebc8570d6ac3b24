"""Executions per second of torch programs against the world size: what one more rank costs.

Two programs, run through ``run_execution`` as a campaign runs them (random
schedules, one process, no supervising process):

- ``speed/ranks_program.py``: five all-reduces, one send/recv per pair of
  ranks and a barrier, for world sizes 2, 4, 8, 16, 32 and 64;
- ``speed/ten_collectives.py``: the two-rank program of ten collectives of
  ``engine_speed.py``;
- ``speed/empty.py:torch_main``, whose ranks return at once, at the same
  world sizes: the fixed cost of an execution (the ranks' threads, module
  copies and default groups, isolation, teardown), measured apart from the
  cost of the steps. Each row's cost per step is its cost less that fixed
  cost, over its steps.

Each figure is given in CPU time (``time.process_time``: every thread of the
process; only one agent runs at a time, so on an idle core it is the wall
time) and in wall time; the machine is shared, so CPU time is the steadier.
The CPU time of the garbage collector's full collections within a measure
is shown apart (and included in the figure): with torch loaded one takes
100-130 ms, and one landing in a short measure (64 two-rank executions)
adds 1.5-2 ms to each execution of it.
In each of ``--repeats`` rounds every measure runs once, one after the
other; the figure is the median round. ``--json FILE`` writes the figures,
so two versions of dnsse can be run alternately (``PYTHONPATH=.../src``) and
compared.

Run: .venv/bin/python benchmarks/ranks_speed.py [--repeats 3] [--sizes 2,8,64]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RANKS_PROGRAM = HERE / "speed" / "ranks_program.py"
TEN_COLLECTIVES = HERE / "speed" / "ten_collectives.py"
EMPTY = HERE / "speed" / "empty.py"
WORLD_SIZES = (2, 4, 8, 16, 32, 64)


class FullCollections:
    """The CPU seconds the collector spends in full (oldest-generation) collections while in use."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._started = 0.0

    def __enter__(self) -> FullCollections:
        gc.callbacks.append(self._observe)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._observe)

    def _observe(self, phase: str, info: dict) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self._started = time.process_time()
        else:
            self.seconds += time.process_time() - self._started


def seconds_per_execution(
    program: Path, world_size: int, executions: int, function: str = "main"
) -> tuple[float, float, int, float]:
    """Per execution: CPU seconds, wall seconds, the last one's steps, and CPU seconds in full collections."""
    from dnsse.engine.runner import run_execution
    from dnsse.engine.target import LoadedTarget, TargetSpec
    from dnsse.frameworks.torch_dist.framework import TorchFramework
    from dnsse.search.random_walk import RandomChooser

    target = LoadedTarget(TargetSpec.parse(f"{program}:{function}"))
    framework = TorchFramework(world_size)
    with framework.activate():
        run_execution(target, framework, RandomChooser(0))  # first-use caches
        with FullCollections() as collections:
            cpu, wall = time.process_time(), time.perf_counter()
            for index in range(executions):
                result = run_execution(target, framework, RandomChooser(index))
                assert result.bug is None, result.bug.render()
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        return cpu / executions, wall / executions, result.steps, collections.seconds / executions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--executions", type=int, default=64, help="executions of 2 ranks per measure (fewer for more)")
    parser.add_argument("--sizes", default=",".join(map(str, WORLD_SIZES)), help="world sizes, comma-separated")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    arguments = parser.parse_args()
    sizes = [int(size) for size in arguments.sizes.split(",")]
    measures = {f"ranks_program, {size} ranks": (RANKS_PROGRAM, size) for size in sizes}
    measures["ten_collectives, 2 ranks"] = (TEN_COLLECTIVES, 2)
    fixed_sizes = sorted({*sizes, 2})
    samples: dict[str, list[tuple[float, float, int, float]]] = {name: [] for name in measures}
    fixed_samples: dict[int, list[tuple[float, float, int, float]]] = {size: [] for size in fixed_sizes}
    for _ in range(arguments.repeats):
        for name, (program, size) in measures.items():
            count = max(4, arguments.executions * 2 // size)
            samples[name].append(seconds_per_execution(program, size, count))
        for size in fixed_sizes:
            count = max(4, arguments.executions * 2 // size)
            fixed_samples[size].append(seconds_per_execution(EMPTY, size, count, "torch_main"))
    fixed = {size: statistics.median(s[0] for s in fixed_samples[size]) for size in fixed_sizes}
    figures: dict[str, dict] = {}
    print(f"Median of {arguments.repeats} alternating rounds.\n")
    print(
        "| program | ranks | steps | CPU ms / execution | executions/s (CPU) | wall ms / execution "
        "| executions/s (wall) | fixed CPU ms (ranks return at once) | CPU us / step beyond it "
        "| full collections, CPU ms / execution (measure, fixed measure) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, (program, size) in measures.items():
        cpu = statistics.median(s[0] for s in samples[name])
        wall = statistics.median(s[1] for s in samples[name])
        steps = samples[name][-1][2]
        per_step = (cpu - fixed[size]) / steps
        collected = statistics.median(s[3] for s in samples[name])
        fixed_collected = statistics.median(s[3] for s in fixed_samples[size])
        figures[name] = {
            "ranks": size, "steps": steps, "cpu_s": cpu, "wall_s": wall, "fixed_cpu_s": fixed[size],
            "step_cpu_s": per_step, "full_collections_cpu_s": collected,
            "fixed_full_collections_cpu_s": fixed_collected,
        }
        print(
            f"| {program.stem} | {size} | {steps} | {1000 * cpu:.2f} | {1 / cpu:,.0f} | {1000 * wall:.2f} "
            f"| {1 / wall:,.0f} | {1000 * fixed[size]:.2f} | {1e6 * per_step:.0f} "
            f"| {1000 * collected:.2f}, {1000 * fixed_collected:.2f} |"
        )
    if len(fixed_sizes) > 1:
        slope = statistics.linear_regression(fixed_sizes, [fixed[size] for size in fixed_sizes]).slope
        print(f"\nFixed cost of one more rank (ranks that return at once, CPU): {1000 * slope:.3f} ms")
    if len(sizes) > 1:
        ranks = [figures[f"ranks_program, {size} ranks"] for size in sizes]
        slope = statistics.linear_regression(sizes, [r["cpu_s"] for r in ranks]).slope
        print(f"One more rank of ranks_program (slope over {sizes[0]}..{sizes[-1]} ranks, CPU): {1000 * slope:.2f} ms")
    if arguments.json:
        arguments.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
