"""The cost model of the README: what an execution's set-up, a scheduling point, a switch, a rank and coverage cost.

Times are the process's CPU time (every thread's, ``time.process_time``):
only one agent runs at a time, so on an idle machine that is the wall
time, and on a loaded one it leaves out the waits for a free core. In each
of ``--repeats`` rounds every measure runs once, one after the
other, so the noise of this shared machine falls on all of them alike. Each
figure is the fastest round (``--median`` for the median): other jobs only
ever slow a measure down, and a difference of two medians taken under heavy
load can come out negative. Measured in one process, through the same
``run_execution`` a campaign calls (no supervising process: that is one
process start per campaign, see ``containment_cost.py``).

- fixed cost of an execution: a threads program whose entry point returns at
  once, and a torch program whose ranks return at once, for world sizes
  2..64 (the slope is the cost of one more rank);
- a scheduling point: two bare agents yielding 20,000 times each (from a
  frame of this file, which stands for the program: each choice records the
  line the agent stood at), with a chooser that never switches, then with
  random switching; the difference,
  divided by the switches taken, is the cost of one switch: a greenlet
  switch where agents share one OS thread (the threads framework), an
  OS-thread handoff where each has its own (torch, Ray, or
  ``DNSSE_AGENT_THREADS=os``);
- coverage: a function that runs 20,000 iterations of local arithmetic,
  with and without the branch-coverage tracer that ``--coverage`` puts in
  every agent; the difference per line event.

Run: .venv/bin/python benchmarks/cost_model.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
EMPTY = HERE / "speed" / "empty.py"
WORLD_SIZES = (2, 4, 8, 16, 32, 64)


def seconds_per_execution(
    function: str, framework_name: str, world_size: int, executions: int, agent_threads: str = ""
) -> float:
    """CPU seconds of one execution of ``function`` in ``speed/empty.py``."""
    return cpu_seconds_per_execution(f"{EMPTY}:{function}", framework_name, world_size, executions, agent_threads)


def cpu_seconds_per_execution(
    target_text: str, framework_name: str, world_size: int, executions: int, agent_threads: str | None = None
) -> float:
    """CPU seconds of one random-schedule execution of ``target_text``, through ``run_execution``.

    ``agent_threads`` sets ``DNSSE_AGENT_THREADS`` (``""``: the default); ``None`` leaves the environment's.
    """
    from dnsse.engine.runner import run_execution
    from dnsse.engine.target import LoadedTarget, TargetSpec
    from dnsse.frameworks.base import framework_named
    from dnsse.search.random_walk import RandomChooser

    target = LoadedTarget(TargetSpec.parse(target_text), framework_name)
    framework = framework_named(framework_name, world_size, True)
    if agent_threads is not None:
        os.environ["DNSSE_AGENT_THREADS"] = agent_threads
    with framework.activate():
        run_execution(target, framework, RandomChooser(0))  # imports and first-use caches
        started = time.process_time()
        for index in range(executions):
            result = run_execution(target, framework, RandomChooser(index))
            assert result.bug is None, result.bug.render()
        return (time.process_time() - started) / executions


def seconds_per_line(coverage: bool, iterations: int = 20_000) -> float:
    """Seconds per line event of ``busy_lines``, with or without the branch-coverage tracer."""
    import importlib.util
    import sys

    from dnsse.coverage.arcs import ArcRecorder

    spec = importlib.util.spec_from_file_location("empty", EMPTY)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    started = time.process_time()
    if coverage:
        sys.settrace(ArcRecorder([str(EMPTY)]).compose(None))
    try:
        module.busy_lines(iterations)
    finally:
        sys.settrace(None)
    return (time.process_time() - started) / (2 * iterations)


def point_costs(greenlets: bool, points: int = 20_000) -> tuple[float, float, float]:
    """Seconds per point without switches, per point with random switching, and the share of points that switched."""
    from dnsse.engine.agent import ThreadAgent
    from dnsse.engine.choices import FirstChooser
    from dnsse.engine.execution import Execution, Limits, current_agent
    from dnsse.engine.operation import Operation
    from dnsse.search.random_walk import RandomChooser

    def run(chooser: object, counts: tuple[int, int]) -> tuple[float, float]:
        # This file stands for the program: each choice records where the agent stood in it, as in a real run.
        execution = Execution(chooser, Limits(max_steps=10 * points, max_seconds=600), frozenset({__file__}))  # type: ignore[arg-type]
        execution.greenlets_allowed = greenlets
        operation = Operation("step")

        def body(count: int) -> None:
            agent = current_agent()
            for _ in range(count):
                execution.yield_point(agent, operation)  # type: ignore[arg-type]

        for index, count in enumerate(counts):
            ThreadAgent(execution, f"agent {index}", lambda count=count: body(count))
        started = time.process_time()
        execution.run()
        elapsed = time.process_time() - started
        agents = [who for who, _ in execution.history]
        switches = sum(1 for before, after in zip(agents, agents[1:]) if before != after)
        return elapsed / execution.step, switches / execution.step

    # Without switches, the first agent takes nearly every point while the other stays runnable,
    # so the chooser is asked at every point, as with random switching.
    first, _ = run(FirstChooser(), (2 * points - 1, 1))
    random, switched = run(RandomChooser(1), (points, points))
    return first, random, switched


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--executions", type=int, default=100, help="executions per measure and round (fewer for many ranks)")
    parser.add_argument("--median", action="store_true", help="report the median round, not the fastest")
    arguments = parser.parse_args()
    n = arguments.executions
    measures: dict[str, Callable[[], float]] = {
        "threads, empty program": lambda: seconds_per_execution("threads_main", "threads", 1, n),
        "threads, empty program, OS threads": lambda: seconds_per_execution("threads_main", "threads", 1, n, "os"),
        "lines, no coverage": lambda: seconds_per_line(False),
        "lines, coverage": lambda: seconds_per_line(True),
    }
    for size in WORLD_SIZES:
        count = max(5, n * 2 // size)
        measures[f"torch, empty program, {size} ranks"] = lambda size=size, count=count: seconds_per_execution(
            "torch_main", "torch", size, count
        )
    samples: dict[str, list[float]] = {name: [] for name in measures}
    points: dict[bool, list[tuple[float, float, float]]] = {True: [], False: []}
    for _ in range(arguments.repeats):
        for name, measure in measures.items():
            samples[name].append(measure())
        for greenlets in points:
            points[greenlets].append(point_costs(greenlets))
    pick = statistics.median if arguments.median else min
    figure = {name: pick(values) for name, values in samples.items()}
    first = {kind: pick(p[0] for p in runs) for kind, runs in points.items()}
    random = {kind: pick(p[1] for p in runs) for kind, runs in points.items()}
    switched = {kind: statistics.median(p[2] for p in runs) for kind, runs in points.items()}
    per_switch = {kind: (random[kind] - first[kind]) / switched[kind] for kind in points}
    sizes = list(WORLD_SIZES)
    times = [figure[f"torch, empty program, {size} ranks"] for size in sizes]
    slope = statistics.linear_regression(sizes, times).slope
    coverage_per_event = figure["lines, coverage"] - figure["lines, no coverage"]
    print(f"{'Median' if arguments.median else 'Fastest'} of {arguments.repeats} alternating rounds.\n")
    print("| cost | figure |")
    print("|---|---:|")
    print(f"| one execution's fixed cost, threads (start, isolation, teardown) | {1000 * figure['threads, empty program']:.2f} ms |")
    print(f"| the same, each agent on an OS thread of its own | {1000 * figure['threads, empty program, OS threads']:.2f} ms |")
    for size, seconds in zip(sizes, times):
        print(f"| one execution's fixed cost, torch, {size} ranks | {1000 * seconds:.2f} ms ({1 / seconds:,.0f} executions/s) |")
    print(f"| one more rank (slope over 2..64 ranks) | {1000 * slope:.2f} ms |")
    for kind, agents, switch in ((True, "greenlet agents", "greenlet switch"), (False, "OS-thread agents", "OS-thread handoff")):
        print(f"| one scheduling point, no switch ({agents}) | {1e6 * first[kind]:.1f} µs |")
        print(f"| one switch to another agent ({switch}), on top of its point | {1e6 * per_switch[kind]:.1f} µs |")
        print(f"| scheduling points/s with random switching ({agents}, {100 * switched[kind]:.0f}% of points "
              f"switch) | {1 / random[kind]:,.0f} |")
    print(f"| one line event under branch coverage | {1e6 * coverage_per_event:.2f} µs |")
    print(f"| a line of plain Python under branch coverage | {figure['lines, coverage'] / figure['lines, no coverage']:.1f}x its time without |")


if __name__ == "__main__":
    main()
