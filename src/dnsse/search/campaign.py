"""A campaign: many executions of one target under one strategy and budget."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from dnsse.coverage.arcs import ArcRecorder, BranchCoverage
from dnsse.engine.bugs import Bug
from dnsse.engine.execution import Limits
from dnsse.engine.runner import ExecutionResult, run_execution
from dnsse.engine.target import LoadedTarget, TargetSpec
from dnsse.errors import BadInput
from dnsse.frameworks.base import Framework, framework_named
from dnsse.report.minimize import minimize
from dnsse.report.trace import Trace, write_trace
from dnsse.search.registry import DEFAULT, make_strategy
from dnsse.spec.sources import load_suite
from dnsse.spec.watch import SpecSuite


@dataclass
class CampaignConfig:
    target: str
    framework: str = "auto"
    world_size: int = 2
    strategy: str = DEFAULT
    budget: int | None = 1000
    time_budget: float | None = None
    seed: int = 0
    keep_going: bool = False
    out: Path = Path(".dnsse")
    limits: Limits = field(default_factory=Limits)
    pct_depth: int = 3
    # dfs: at most this many preemptions per schedule (None: no bound, with reduction).
    preemption_bound: int | None = None
    minimize: bool = True
    # Measure branch coverage of the target (costs a line tracer in every agent).
    coverage: bool = False
    # LTL properties (and builtin:NAME) checked in every execution, besides
    # those of the spec files and the target's DNSSE_SPECS.
    specs: list[str] = field(default_factory=list)
    spec_files: list[Path] = field(default_factory=list)
    # Inject the faults a program declares (Ray actor crashes, task retries).
    faults: bool = True


@dataclass
class FoundBug:
    bug: Bug
    execution: int
    trace_path: Path
    elapsed_s: float


@dataclass
class CampaignResult:
    target: str
    framework: str
    strategy: str
    world_size: int
    executions: int
    elapsed_s: float
    bugs: list[FoundBug]
    # Set when a systematic strategy exhausted its bound: what was covered.
    verified: dict | None = None
    coverage: BranchCoverage | None = None


def load(
    target_text: str, framework_name: str, world_size: int, faults: bool = True
) -> tuple[LoadedTarget, Framework]:
    """Parse and compile the target and pick its framework; BadInput on any defect."""
    if world_size < 1:
        raise BadInput(f"--world-size must be at least 1, got {world_size}")
    target = LoadedTarget(TargetSpec.parse(target_text), framework_name)
    return target, framework_named(target.framework, world_size, faults)


def preflight(target: LoadedTarget, framework: Framework) -> None:
    """Run the target's module once, so an import error is bad input, not a bug."""
    try:
        framework.inputs(target)
    except BadInput:
        raise
    except Exception as error:  # noqa: BLE001 - whatever the module raises, the user must fix it
        raise BadInput(
            f"the target {target.spec} failed to load: {type(error).__name__}: {error}. "
            "Run it with plain Python to see the full error."
        ) from None


def run_campaign(
    config: CampaignConfig,
    on_bug: Callable[[FoundBug], None] | None = None,
    on_start: Callable[[LoadedTarget, Framework], None] | None = None,
    on_execution: Callable[[int, ExecutionResult, ArcRecorder | None], None] | None = None,
) -> CampaignResult:
    """Run executions until the budget, or the first bug unless ``keep_going``.

    ``on_execution`` sees every execution (its number from 1, its result, and
    the arcs recorded so far when ``config.coverage`` is on).
    """
    strategy = make_strategy(config.strategy, config.seed, config.pct_depth, config.preemption_bound)
    if config.budget is not None and config.budget < 1:
        raise BadInput(f"--budget must be at least 1 execution, got {config.budget}")
    target, framework = load(config.target, config.framework, config.world_size, config.faults)
    suite = load_suite(config.specs, config.spec_files, target.spec.path)
    monitors = [suite] if suite is not None else []
    found: list[FoundBug] = []
    seen: set[tuple[str, str]] = set()
    started = time.perf_counter()
    executions = 0
    recorder = ArcRecorder(target.source_files) if config.coverage else None
    trace_hook = recorder.compose if recorder is not None else None
    with framework.activate():
        preflight(target, framework)
        if on_start is not None:
            on_start(target, framework)
        while not _exhausted(strategy) and (config.budget is None or executions < config.budget):
            if config.time_budget is not None and time.perf_counter() - started >= config.time_budget:
                break
            result = run_execution(
                target,
                framework,
                strategy.chooser_for(executions),
                config.limits,
                trace_hook=trace_hook,
                monitors=monitors,
            )
            executions += 1
            strategy.observe(result)
            if on_execution is not None:
                on_execution(executions, result, recorder)
            if result.bug is None or result.bug.signature() in seen:
                continue
            seen.add(result.bug.signature())
            if config.minimize:
                result = _minimized(target, framework, config, result, suite)
            path = write_trace(_trace_of(config, target, framework, result, executions, suite), config.out)
            bug = FoundBug(result.bug, executions, path, time.perf_counter() - started)
            found.append(bug)
            if on_bug is not None:
                on_bug(bug)
            if not config.keep_going:
                break
    return CampaignResult(
        target=str(target.spec),
        framework=framework.name,
        strategy=strategy.name,
        world_size=config.world_size,
        executions=executions,
        elapsed_s=time.perf_counter() - started,
        bugs=found,
        coverage=recorder.coverage() if recorder is not None else None,
        # A bug-free exhausted search is a statement; with a bug, the bug is the news.
        verified=strategy.verified() if _exhausted(strategy) and not found else None,  # type: ignore[attr-defined]
    )


def _exhausted(strategy: object) -> bool:
    """Whether a systematic strategy has nothing left to try (random ones never do)."""
    return bool(getattr(strategy, "exhausted", False))


def _minimized(
    target: LoadedTarget, framework: Framework, config: CampaignConfig, result: ExecutionResult, suite: SpecSuite | None
) -> ExecutionResult:
    """The same bug with as few preemptions as minimization finds (the found run if none)."""
    assert result.bug is not None
    inputs = result.inputs
    smaller = minimize(
        lambda chooser: run_execution(
            target, framework, chooser, config.limits, inputs=inputs, monitors=[suite] if suite is not None else []
        ),
        result.choices,
        result.bug.signature(),
    )
    return smaller if smaller is not None else result


def _trace_of(
    config: CampaignConfig,
    target: LoadedTarget,
    framework: Framework,
    result: ExecutionResult,
    execution: int,
    suite: SpecSuite | None,
) -> Trace:
    assert result.bug is not None
    return Trace(
        target=str(target.spec),
        framework=framework.name,
        world_size=config.world_size,
        inputs=result.inputs,
        choices=result.choices,
        limits=config.limits,
        bug=result.bug,
        strategy=config.strategy,
        execution=execution,
        steps=result.steps,
        specs=suite.texts if suite is not None else [],
        faults=config.faults,
    )
