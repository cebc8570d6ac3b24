"""Speed of Ray programs under dnsse, against one real Ray run of the same program.

The program (``program`` below: tasks with ref arguments, a nested task, a
synchronous and an async actor, put, wait) runs

1. under control, many times with random schedules: executions per second;
2. under real Ray, in a child process (real Ray and the controlled runtime
   are kept apart): the time of ``ray.init()`` and of one run of the program.

Run: .venv/bin/python benchmarks/ray_speed.py [--executions 200] [--repeats 3] [--no-real]
Figures are medians of the repeats; the machine is shared, so compare ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()


def program() -> int:
    import asyncio

    import ray

    @ray.remote
    def square(x: int) -> int:
        return x * x

    @ray.remote
    def total(values: list) -> int:
        return sum(ray.get(values))

    @ray.remote
    class Counter:
        def __init__(self) -> None:
            self.count = 0

        def add(self, amount: int) -> int:
            self.count += amount
            return self.count

    @ray.remote
    class Cache:
        def __init__(self) -> None:
            self.entries: dict = {}

        async def put(self, key: str, holder: list) -> int:
            self.entries[key] = await holder[0]
            await asyncio.sleep(0)
            return len(self.entries)

    squares = [square.remote(i) for i in range(8)]
    ray.wait(squares, num_returns=4)
    counter = Counter.remote()
    for value in ray.get(squares):
        counter.add.remote(value)
    cache = Cache.remote()
    ray.get([cache.put.remote(f"k{i}", [squares[i]]) for i in range(3)])
    shared = ray.put(list(range(10)))
    result = ray.get(total.remote(squares)) + ray.get(counter.add.remote(0)) + len(ray.get(shared))
    assert result == 140 + 140 + 10, result
    return result


def controlled_rate(executions: int, agent_threads: str = "") -> float:
    """Controlled executions/s; ``agent_threads="os"`` gives each agent an OS thread instead of a greenlet."""
    from dnsse.engine.runner import run_execution
    from dnsse.engine.target import LoadedTarget, TargetSpec
    from dnsse.frameworks.ray.framework import RayFramework
    from dnsse.search.registry import make_strategy

    target = LoadedTarget(TargetSpec.parse(f"{HERE}:program"))
    framework = RayFramework()
    strategy = make_strategy("random", 0)
    os.environ["DNSSE_AGENT_THREADS"] = agent_threads
    with framework.activate():
        started = time.perf_counter()
        for index in range(executions):
            result = run_execution(target, framework, strategy.chooser_for(index))
            if result.bug is not None:
                raise SystemExit(f"the benchmark program failed under control:\n{result.bug.render()}")
        return executions / (time.perf_counter() - started)


def real_ray_times(repeats: int) -> dict:
    """In a child process: seconds of ray.init(), and of each run of the program."""
    child = subprocess.run(
        [sys.executable, str(HERE), "--real-child", str(repeats)], capture_output=True, text=True, timeout=600
    )
    if child.returncode != 0:
        tail = (child.stderr or child.stdout).strip().splitlines()[-3:]
        return {"error": " / ".join(tail) or f"exit {child.returncode}"}
    return json.loads(child.stdout.strip().splitlines()[-1])


def _real_child(repeats: int) -> None:
    started = time.perf_counter()
    import ray

    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    init_s = time.perf_counter() - started
    runs = []
    for _ in range(repeats):
        began = time.perf_counter()
        program()
        runs.append(time.perf_counter() - began)
    ray.shutdown()
    print(json.dumps({"init_s": init_s, "runs_s": runs}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executions", type=int, default=200, help="controlled executions per repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-real", action="store_true", help="skip the real Ray run")
    parser.add_argument("--real-child", type=int, default=None, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.real_child is not None:
        _real_child(arguments.real_child)
        return
    rates: dict[str, list[float]] = {"": [], "os": []}
    for _ in range(arguments.repeats):
        for agent_threads in rates:  # alternating, so the machine's load falls on both alike
            rates[agent_threads].append(controlled_rate(arguments.executions, agent_threads))
    rate = statistics.median(rates[""])
    rows = [
        ("under dnsse: executions/s", f"{rate:.0f}"),
        ("under dnsse, each agent on an OS thread (DNSSE_AGENT_THREADS=os): executions/s",
         f"{statistics.median(rates['os']):.0f}"),
        ("under dnsse: ms per execution", f"{1000 / rate:.1f}"),
    ]
    if not arguments.no_real:
        real = real_ray_times(arguments.repeats)
        if "error" in real:
            rows.append(("real Ray", f"could not run: {real['error']}"))
        else:
            run_s = statistics.median(real["runs_s"])
            rows += [
                ("real Ray: ray.init() s", f"{real['init_s']:.2f}"),
                ("real Ray: one run s (after init)", f"{run_s:.3f}"),
                ("controlled executions in one real run", f"{rate * run_s:.0f}"),
                ("controlled executions in init + one run", f"{rate * (real['init_s'] + run_s):.0f}"),
            ]
    width = max(len(name) for name, _ in rows)
    print(f"{'measure'.ljust(width)} | value")
    print(f"{'-' * width}-+-------")
    for name, value in rows:
        print(f"{name.ljust(width)} | {value}")


if __name__ == "__main__":
    main()
