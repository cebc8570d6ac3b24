"""Small helpers shared by tests."""

from __future__ import annotations

import ast
import contextlib
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import pytest
from dnsse.engine.choices import Chooser
from dnsse.engine.inputs import is_open
from dnsse.engine.limits import Limits
from dnsse.engine.runner import ExecutionResult, run_execution
from dnsse.engine.target import LoadedTarget, TargetSpec

PROGRAMS = Path(__file__).parent / "programs"


def torch_marks(program: Path) -> list[pytest.MarkDecorator]:
    """``[pytest.mark.torch]`` for a program that imports torch (skipped where torch is not installed), else ``[]``."""
    tree = ast.parse(program.read_text(encoding="utf-8"))
    roots = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    roots |= {(node.module or "").split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    return [pytest.mark.torch] if "torch" in roots else []


def check_report(tmp_path: Path, target: str, strategy: str, seed: int, budget: int, *extra: str) -> tuple[int, dict]:
    """``dnsse check`` of ``target`` without minimizing (the exit status must be 0 or 1): its status and JSON report.

    Without the database of known failures: a test compares what searches find, not what an earlier one left.
    """
    report = tmp_path / f"{target.rsplit(':', 1)[1]}-{strategy}-{seed}.json"
    result = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", target, "--strategy", strategy, "--seed", str(seed),
         "--budget", str(budget), "--no-minimize", "--no-db", "--out", str(tmp_path / "out"), "--json", str(report), *extra],
        capture_output=True, text=True, timeout=600,
    )
    assert result.returncode in (0, 1), result.stdout + result.stderr
    return result.returncode, json.loads(report.read_text())


class SeededChooser:
    """Uniformly random choices from one seed: the simplest strategy there is."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def next_agent(self, runnable: Sequence[int], current: int | None, step: int) -> int:
        return self.rng.randrange(len(runnable))

    def next_value(self, kind: str, options: int) -> int:
        # Open inputs (no Range) keep their defaults, as the blind strategies keep them.
        return 0 if is_open(options) else self.rng.randrange(options)


def load_program(spec: str, framework: str = "auto") -> LoadedTarget:
    """``"file.py:func"`` of tests/programs as a loaded target."""
    return LoadedTarget(TargetSpec.parse(str(PROGRAMS / spec)), framework)


def run_torch(
    spec: str, world_size: int = 2, seeds: Iterable[int] = range(50), limits: Limits | None = None
) -> list[ExecutionResult]:
    """One controlled execution of a torch program per seed, with a seeded random chooser."""
    from dnsse.frameworks.torch_dist.framework import TorchFramework

    target = load_program(spec)
    framework = TorchFramework(world_size)
    with framework.activate():
        return [run_execution(target, framework, SeededChooser(seed), limits or Limits()) for seed in seeds]


def run_ray(spec: str, seeds: Iterable[int] = range(40), faults: bool = True) -> list[ExecutionResult]:
    """One controlled execution of a Ray program's driver per seed, with a seeded random chooser."""
    from dnsse.frameworks.ray.framework import RayFramework

    target = load_program(spec)
    framework = RayFramework(faults=faults)
    with framework.activate():
        return [run_execution(target, framework, SeededChooser(seed)) for seed in seeds]


def ray_outcomes(spec: str, seeds: Iterable[int] = range(12)) -> list[tuple]:
    """What each seeded execution of a Ray program did: steps, choices, bug (with its details), events.

    For comparing a fast path with the way it replaces: equal outcomes, execution by execution.
    """
    return [
        (
            result.steps,
            [choice.to_json() for choice in result.choices],
            (result.bug.signature(), result.bug.details) if result.bug is not None else None,
            [(event.step, event.agent, event.name, event.fields) for event in result.events],
        )
        for result in run_ray(spec, seeds=seeds)
    ]


@contextlib.contextmanager
def controlled(
    spec: str, world_size: int = 2, limits: Limits | None = None
) -> Iterator[Callable[[Chooser], ExecutionResult]]:
    """A program of tests/programs with its framework active: yields ``run(chooser) -> result``."""
    from dnsse.frameworks.base import framework_named

    target = load_program(spec)
    framework = framework_named(target.framework, world_size)
    with framework.activate():
        yield lambda chooser: run_execution(target, framework, chooser, limits or Limits())


def gloo_processes(world_size: int, target: Callable, arguments: Callable[[int, str], tuple], timeout: float) -> dict:
    """What each of ``world_size`` spawned processes put on the queue: ``target(*arguments(rank, store), queue)``.

    Skips the calling test where gloo processes cannot start here.
    """
    torch_mp = pytest.importorskip("torch.multiprocessing")
    import tempfile

    import torch.distributed as dist

    if not dist.is_gloo_available():
        pytest.skip("this torch build has no gloo backend")
    context = torch_mp.get_context("spawn")
    queue = context.Queue()
    with tempfile.TemporaryDirectory() as directory:
        store = str(Path(directory) / "store")
        workers = [
            context.Process(target=target, args=(*arguments(rank, store), queue)) for rank in range(world_size)
        ]
        for worker in workers:
            worker.start()
        try:
            return dict(queue.get(timeout=timeout) for _ in workers)
        except Exception as error:  # noqa: BLE001 - any failure to start gloo means: cannot compare here
            pytest.skip(f"{world_size} gloo processes could not run here: {error!r}")
        finally:
            for worker in workers:
                worker.join(timeout=10)
                if worker.is_alive():
                    worker.kill()


def run_under_gloo(targets: Sequence[str], world_size: int, out: Path) -> None:
    """Run each ``tests/real_programs`` target under real gloo, ``world_size`` processes, writing into ``out``.

    Skips the calling test where gloo processes cannot start here, or where
    the programs could not run under gloo (the comparison needs both sides).
    """
    sys.path.insert(0, str(Path(__file__).parent / "real_programs"))
    import under_gloo

    outcomes = gloo_processes(
        world_size, under_gloo.run, lambda rank, store: (rank, world_size, store, list(targets), str(out)), 600
    )
    if any(outcome != "ok" for outcome in outcomes.values()):
        pytest.skip(f"the programs could not run under gloo here: {outcomes}")


def in_this_process(program: Path | str) -> bool:
    """Whether a test may check ``program`` in its own process (``main(..., contained=False)``).

    Not an asyncio program: a future whose exception no one retrieved is logged, with a traceback, when
    the collector finds it, which may be in the middle of whatever the test process does next; formatting
    that traceback parses source, and CPython 3.11 fails a parse that another parse interrupts
    ("AST constructor recursion depth mismatch").
    """
    return "async def" not in Path(str(program).split(":")[0]).read_text(encoding="utf-8")
