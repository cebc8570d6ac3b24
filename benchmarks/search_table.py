"""How much the systematic strategies cost, and how fast each strategy finds bugs.

For every entry point of the benchmark programs (``tests/programs/search_*.py``
and ``benchmarks/programs/*.py``; ``--all-tests`` adds the rest of
``tests/programs``) one row:

- ``brute``: every schedule, no reduction (``dnsse.search.brute_force``);
- ``classes``: how many distinct classes (equivalent schedules counted once)
  brute force's bug-free schedules fall into: the least any reduction can run;
- ``dfs p<=1`` / ``dfs p<=2``: executions of ``dfs --preemption-bound 1/2``
  to exhaust its bound (exact: as many as brute force has schedules within it);
- ``dpor``: executions of ``dfs`` without a bound (one per equivalence class,
  plus what Flanagan-Godefroid DPOR cannot avoid) to exhaust the program;
- ``random``, ``pct``, ``pos``, ``dfs``: executions to the first bug (the mean
  over ``--seeds`` campaign seeds for the randomized ones); ``-`` when the
  entry point is correct, ``>N`` when the cap was reached first.

A search stops at ``--cap`` executions or ``--cell-seconds`` seconds (``>N``).
Run: .venv/bin/python benchmarks/search_table.py [--cap 2000] [--seeds 5] [--out table.md]
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from dnsse.engine.choices import ChoiceKind, Chooser
from dnsse.engine.runner import ExecutionResult, run_execution
from dnsse.engine.target import LoadedTarget, TargetSpec
from dnsse.frameworks.base import framework_named
from dnsse.search.brute_force import all_schedules
from dnsse.search.dependency import canonical_order
from dnsse.search.registry import make_strategy

ROOT = Path(__file__).resolve().parent.parent
TEST_PROGRAMS = ROOT / "tests" / "programs"
BENCHMARK_PROGRAMS = ROOT / "benchmarks" / "programs"
Run = Callable[[Chooser], ExecutionResult]


@dataclass
class Cell:
    """A count of executions; ``capped`` when the search stopped before its end."""

    executions: float
    capped: bool = False

    def __str__(self) -> str:
        if self.capped:
            return f">{self.executions:.0f}"
        return f"{self.executions:.0f}" if float(self.executions).is_integer() else f"{self.executions:.1f}"


NO_BUG = "-"


def entry_points(path: Path) -> list[str]:
    """The functions a campaign may start: ``main*`` in benchmarks, every public function in tests."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = [node.name for node in tree.body if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")]
    if path.parent == BENCHMARK_PROGRAMS:
        names = [name for name in names if name.startswith("main")]
    return names


def world_size_of(path: Path, function: str) -> int:
    """The world size a program's docstrings ask for ("world size 3"), else 2."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    texts = [ast.get_docstring(tree) or ""]
    texts += [ast.get_docstring(n) or "" for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function]
    for text in reversed(texts):
        match = re.search(r"world size (\d+)", text)
        if match:
            return int(match.group(1))
    return 2


def exhaust(run: Run, strategy_name: str, bound: int | None, cap: int, seconds: float) -> tuple[Cell, bool]:
    """Executions until the strategy has nothing left to try, and whether any of them showed a bug."""
    strategy = make_strategy(strategy_name, 0, preemption_bound=bound)
    started = time.perf_counter()
    executions, buggy = 0, False
    while not strategy.exhausted:  # type: ignore[attr-defined]
        if executions >= cap or time.perf_counter() - started > seconds:
            return Cell(executions, capped=True), buggy
        result = run(strategy.chooser_for(executions))
        buggy = buggy or result.bug is not None
        strategy.observe(result)
        executions += 1
    return Cell(executions), buggy


def brute(run: Run, cap: int, seconds: float) -> tuple[Cell, Cell, bool]:
    """The number of schedules, of their distinct classes, and whether any of them shows a bug."""
    started = time.perf_counter()
    count, buggy = 0, False
    classes: set = set()
    try:
        for schedule in all_schedules(run, limit=cap):
            count += 1
            result = schedule.result
            buggy = buggy or result.bug is not None
            if result.bug is None:
                values = tuple(c.index for c in result.choices if c.kind not in (ChoiceKind.AGENT, ChoiceKind.SEED))
                classes.add((canonical_order(result.history, result.created_at), values))
            if time.perf_counter() - started > seconds:
                return Cell(count, capped=True), Cell(len(classes), capped=True), buggy
    except ValueError:
        return Cell(count, capped=True), Cell(len(classes), capped=True), buggy
    return Cell(count), Cell(len(classes)), buggy


def first_bug(run: Run, strategy_name: str, seed: int, cap: int, seconds: float) -> Cell | None:
    """Executions until the first bug; ``None`` when the search ended (dfs) without one."""
    strategy = make_strategy(strategy_name, seed)
    started = time.perf_counter()
    for execution in range(cap):
        if getattr(strategy, "exhausted", False):
            return None
        if time.perf_counter() - started > seconds:
            return Cell(execution, capped=True)
        result = run(strategy.chooser_for(execution))
        strategy.observe(result)
        if result.bug is not None:
            return Cell(execution + 1)
    return Cell(cap, capped=True)


def mean_first_bug(run: Run, strategy_name: str, seeds: int, cap: int, seconds: float) -> str:
    cells = [first_bug(run, strategy_name, seed, cap, seconds) for seed in range(seeds)]
    found = [cell for cell in cells if cell is not None]
    if not found:
        return NO_BUG
    if any(cell.capped for cell in found):
        return str(Cell(max(cell.executions for cell in found), capped=True))
    return str(Cell(sum(cell.executions for cell in found) / len(found)))


def row(path: Path, function: str, cap: int, seeds: int, seconds: float) -> list[str]:
    world_size = world_size_of(path, function)
    target = LoadedTarget(TargetSpec.parse(f"{path}:{function}"), "auto")
    framework = framework_named(target.framework, world_size)
    with framework.activate():

        def run(chooser: Chooser) -> ExecutionResult:
            return run_execution(target, framework, chooser)

        schedules, classes, buggy = brute(run, cap, seconds)
        dpor, dpor_buggy = exhaust(run, "dfs", None, cap, seconds)
        buggy = buggy or dpor_buggy
        bounded = [exhaust(run, "dfs", bound, cap, seconds)[0] for bound in (1, 2)]
        # A search that ran every schedule (or every class) without a bug proves
        # there is none to find: the first-bug columns would only burn the cap.
        correct = not buggy and (not schedules.capped or not dpor.capped)
        if correct:
            found = [NO_BUG] * 4
        else:
            found = [mean_first_bug(run, name, seeds, cap, seconds) for name in ("random", "pct", "pos")]
            dfs = first_bug(run, "dfs", 0, cap, seconds)
            found.append(NO_BUG if dfs is None else str(dfs))
    name = f"{path.name}:{function}" + (f" (ws {world_size})" if framework.name == "torch" else "")
    seen_bug = buggy or any(not cell.startswith(">") and cell != NO_BUG for cell in found)
    verdict = "no" if correct else ("yes" if seen_bug else "?")
    return [name, framework.name, verdict, str(schedules), str(classes), *map(str, bounded), str(dpor), *found]


HEADER = [
    "program", "framework", "bug", "brute", "classes", "dfs p<=1", "dfs p<=2", "dpor", "random", "pct", "pos", "dfs"
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=int, default=2000, help="executions per search at most (default 2000)")
    parser.add_argument("--seeds", type=int, default=5, help="campaign seeds of random, pct and pos (default 5)")
    parser.add_argument("--cell-seconds", type=float, default=60.0, help="seconds per search at most (default 60)")
    parser.add_argument("--all-tests", action="store_true", help="every program of tests/programs, not only search_*")
    parser.add_argument("--match", default="", help="only programs whose FILE:FUNC contains this text")
    parser.add_argument("--out", type=Path, default=None, help="also write the table (markdown) here")
    arguments = parser.parse_args(argv)
    files = sorted(TEST_PROGRAMS.glob("*.py")) if arguments.all_tests else sorted(
        [*TEST_PROGRAMS.glob("search_*.py"), *TEST_PROGRAMS.glob("dpor_*.py")]
    )
    files += sorted(BENCHMARK_PROGRAMS.glob("*.py"))
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    print(lines[0], lines[1], sep="\n", flush=True)
    for path in files:
        for function in entry_points(path):
            if arguments.match not in f"{path.name}:{function}":
                continue
            try:
                cells = row(path, function, arguments.cap, arguments.seeds, arguments.cell_seconds)
            except Exception as error:  # noqa: BLE001 - one broken program must not end the table
                cells = [f"{path.name}:{function}", "?", f"error: {type(error).__name__}: {error}"] + [""] * 9
            lines.append("| " + " | ".join(cells) + " |")
            print(lines[-1], flush=True)
    if arguments.out is not None:
        arguments.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
