"""Speed of the controlled engine, measured side by side in one run.

1. scheduling points per second of the bare engine (two agents yielding),
   with the agents as greenlets of one OS thread and on OS threads of their own,
   under each strategy's chooser, and the CPU time of one point with greenlets;
2. executions per second of a 2-rank program with ten collectives;
3. the slowdown of one controlled execution against the same program run
   uncontrolled with real gloo (two processes: gloo cannot be given two
   default groups in one process through the public API).

Run: .venv/bin/python benchmarks/engine_speed.py [--repeats 5] [--points-only]
Figures are medians of the repeats; the machine is shared, so compare ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "speed" / "ten_collectives.py"


def scheduling_points_per_second(chooser_name: str, points: int = 20_000, greenlets: bool = True) -> tuple[float, float]:
    """Points per second (wall) and CPU microseconds per point, for two agents making ``points`` each."""
    from dnsse.engine.agent import ThreadAgent
    from dnsse.engine.choices import FirstChooser
    from dnsse.engine.execution import Execution, Limits, current_agent
    from dnsse.engine.operation import Access, Operation
    from dnsse.search.dfs import DfsStrategy
    from dnsse.search.pct import PctChooser
    from dnsse.search.pos import PosChooser
    from dnsse.search.random_walk import RandomChooser

    chooser = {
        "first (no switches)": lambda: FirstChooser(),
        "random": lambda: RandomChooser(1),
        "pct (depth 3)": lambda: PctChooser(1, 3, 2 * points),
        "pos": lambda: PosChooser(1),
        # The first execution of a search, the one that adds a node at every choice.
        "dfs": lambda: DfsStrategy().chooser_for(0),
    }[chooser_name]()
    # This file stands for the program: each choice records where the agent stood in it, as in a real run.
    execution = Execution(chooser, Limits(max_steps=10 * points), frozenset({__file__}))
    execution.greenlets_allowed = greenlets
    # Each agent reads, then writes, one shared attribute (``s.n += 1``), as threads do. Operations that
    # write nothing would make every agent a spinning one to pct (which then alternates them).
    operations = (Operation("attr.load", (("o1.n", Access.READ),)), Operation("attr.store", (("o1.n", Access.WRITE),)))

    def body() -> None:
        agent = current_agent()
        for point in range(points):
            execution.yield_point(agent, operations[point & 1])

    for index in range(2):
        ThreadAgent(execution, f"agent {index}", body)
    started, cpu = time.perf_counter(), time.process_time()
    execution.run()
    return execution.step / (time.perf_counter() - started), 1e6 * (time.process_time() - cpu) / execution.step


def controlled_executions_per_second(strategy_name: str, executions: int = 100) -> float:
    from dnsse.engine.runner import run_execution
    from dnsse.engine.target import LoadedTarget, TargetSpec
    from dnsse.frameworks.torch_dist.framework import TorchFramework
    from dnsse.search.registry import make_strategy

    target = LoadedTarget(TargetSpec.parse(f"{PROGRAM}:main"))
    framework = TorchFramework(2)
    strategy = make_strategy(strategy_name, seed=1)
    with framework.activate():
        started = time.perf_counter()
        for index in range(executions):
            result = run_execution(target, framework, strategy.chooser_for(index))
            strategy.observe(result)
            assert result.bug is None, result.bug.render()
        return executions / (time.perf_counter() - started)


def _gloo_rank(rank: int, world_size: int, store_path: str, runs: int, out_path: str) -> None:
    import importlib.util

    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{store_path}", rank=rank, world_size=world_size)
    spec = importlib.util.spec_from_file_location("ten_collectives", PROGRAM)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    module.main(rank, world_size)  # warm-up: connections are made lazily
    dist.barrier()
    started = time.perf_counter()
    for _ in range(runs):
        module.main(rank, world_size)
    elapsed = time.perf_counter() - started
    if rank == 0:
        Path(out_path).write_text(str(elapsed / runs))
    dist.destroy_process_group()


def uncontrolled_seconds_per_run(runs: int = 200) -> float | None:
    """Seconds per run of the program body under real gloo, or None if gloo cannot start."""
    import torch.multiprocessing as mp

    with tempfile.TemporaryDirectory() as directory:
        store = os.path.join(directory, "store")
        out = os.path.join(directory, "seconds")
        try:
            mp.start_processes(_gloo_rank, args=(2, store, runs, out), nprocs=2, start_method="spawn", join=True)
            return float(Path(out).read_text())
        except Exception as error:  # noqa: BLE001 - the baseline is optional where gloo cannot start
            print(f"(real gloo could not run here: {error})", file=sys.stderr)
            return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--points-only", action="store_true", help="only the scheduling points table")
    arguments = parser.parse_args()
    repeats = arguments.repeats

    print("## Engine: scheduling points per second (2 agents, 40,000 points)\n")
    print(
        "| chooser | points/s, greenlet agents (median) | points/s, OS-thread agents (median) | ratio "
        "| CPU µs per point, greenlet agents (median) |"
    )
    print("|---|---:|---:|---:|---:|")
    for name in ("first (no switches)", "random", "pct (depth 3)", "pos", "dfs"):
        rates: dict[bool, list[float]] = {True: [], False: []}
        cpu: list[float] = []
        for _ in range(repeats):
            for greenlets in rates:  # alternating, so the machine's load falls on both alike
                rate, microseconds = scheduling_points_per_second(name, greenlets=greenlets)
                rates[greenlets].append(rate)
                if greenlets:
                    cpu.append(microseconds)
        ours, theirs = statistics.median(rates[True]), statistics.median(rates[False])
        print(f"| {name} | {ours:,.0f} | {theirs:,.0f} | {ours / theirs:.2f}x | {statistics.median(cpu):.2f} |")
    if arguments.points_only:
        return

    print("\n## torch: 2 ranks, ten collectives per execution\n")
    per_strategy = {}
    for name in ("random", "pct"):
        per_strategy[name] = statistics.median(controlled_executions_per_second(name) for _ in range(repeats))
    uncontrolled = uncontrolled_seconds_per_run()
    print("| run | executions/s (median) | ms per execution | slowdown vs real gloo |")
    print("|---|---:|---:|---:|")
    for name, rate in per_strategy.items():
        slowdown = f"{(1 / rate) / uncontrolled:.1f}x" if uncontrolled else "n/a"
        print(f"| dnsse, {name} | {rate:,.0f} | {1000 / rate:.2f} | {slowdown} |")
    if uncontrolled:
        print(f"| real gloo, 2 processes, uncontrolled | {1 / uncontrolled:,.0f} | {1000 * uncontrolled:.2f} | 1.0x |")


if __name__ == "__main__":
    main()
