"""A campaign: many executions of one target under one strategy and budget, and the bugs they showed.

:class:`Campaign` is what every execution of a campaign shares, in every
process that runs some (the target, its framework, the specs, coverage);
the process that records bugs records them here. How the executions are
run is an executor's business (:mod:`dnsse.campaign.executor`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from typing import Callable, Iterator

from dnsse.search.bug_family import bug_family
from dnsse.campaign.config import CampaignConfig, CampaignResult, FoundBug, InconclusiveRun
from dnsse.campaign.confirm import confirm
from dnsse.campaign.loading import load, pin_inputs, preflight
from dnsse.campaign.rejections import Rejections
from dnsse.campaign.relocation import project_root
from dnsse.campaign.trace import Trace, write_trace
from dnsse.coverage.feedback import CoverageMap
from dnsse.coverage.recorder import arc_recorder
from dnsse.engine.bugs import BugKind
from dnsse.engine.choices import Chooser, ReplayChooser
from dnsse.engine.clock import format_delay
from dnsse.engine.determinism import Expected
from dnsse.engine.execution import Limits
from dnsse.engine.flight import FlightRecorder
from dnsse.engine.hash_seed import current_hash_seed
from dnsse.engine.inputs import show_value
from dnsse.engine.memory import is_exhausted, memory_limit
from dnsse.engine.runner import ExecutionResult, Monitor, run_execution
from dnsse.engine.target import LoadedTarget, TargetSpec
from dnsse.frameworks.base import Framework
from dnsse.search.advisor_setup import AdvisorSetup
from dnsse.search.minimize import minimize
from dnsse.search.strategy import Strategy
from dnsse.spec.sources import load_suite
from dnsse.spec.watch import SpecSuite


class Campaign:
    """What every execution of one campaign shares, and the bugs it found so far.

    The intake (:mod:`dnsse.campaign.intake`) records bugs here (deduplicate,
    minimize, write the trace, confirm, announce); worker processes and Ray
    tasks run their executions through it too, so specs, faults, limits and
    coverage apply alike.
    """

    def __init__(
        self, config: CampaignConfig, on_bug: Callable[[FoundBug], None] | None = None, feedback: bool = False
    ) -> None:
        """``feedback``: give every execution's result the coverage it added (coverage-guided strategies)."""
        self.config = config
        self.target, self.framework = load(
            config.target, config.framework, config.world_size, config.faults, config.directory
        )
        self.suite = load_suite(config.specs, config.spec_files, self.target.spec.path)
        self.recorder = arc_recorder(self.target.source_files) if config.coverage or feedback else None
        self.coverage_map = CoverageMap(self.recorder) if feedback and self.recorder is not None else None
        self.found: list[FoundBug] = []
        # Told what the campaign does between executions (minimizing, confirming a bug): see CampaignControl.
        self.on_phase: Callable[[str], None] | None = None
        self.inconclusive: list[InconclusiveRun] = []
        self.rejections = Rejections()
        self.started = time.perf_counter()
        self._monitors = [self.suite] if self.suite is not None else []
        # One bug once: each bug found so far, by its family (see dnsse.search.bug_family); None while
        # it is minimized and confirmed, and for good if its trace did not replay it.
        self._seen: dict[tuple[str, tuple[str, ...]], FoundBug | None] = {}
        self._on_bug = on_bug
        self.pinned: dict[str, object] = {}
        # Where each run of the target writes its choices as it goes (see dnsse.engine.flight).
        self.flight: FlightRecorder | None = None

    def adopt(self, found: FoundBug) -> None:
        """A bug found before this campaign was resumed: reported again, never found twice."""
        self._seen[bug_family(found.bug)] = found
        self.found.append(found)

    def watch(self, monitor: Monitor) -> None:
        """Let ``monitor`` watch every execution from now on."""
        self._monitors.append(monitor)

    def unwatch(self, monitor: Monitor) -> None:
        """Stop letting ``monitor`` watch (a Ray task's strategy, in a campaign kept for the next tasks)."""
        self._monitors.remove(monitor)

    def prepare(self) -> None:
        """Run the module once (an import error is bad input) and parse the pinned inputs.

        The framework must be active.
        """
        preflight(self.target, self.framework)
        self.pinned = pin_inputs(self.framework.inputs(self.target), self.config.inputs)

    def out_of_time(self) -> bool:
        budget = self.config.time_budget
        return budget is not None and time.perf_counter() - self.started >= budget

    def execute(self, chooser: Chooser) -> ExecutionResult:
        """Run the target once with ``chooser``; the framework must be active."""
        arcs = arc_recorder(self.target.source_files) if self.coverage_map is not None else self.recorder
        with arcs.recording() if arcs is not None else contextlib.nullcontext():
            result = run_execution(
                self.target,
                self.framework,
                chooser,
                self.config.limits,
                pinned=self.pinned,
                trace_hook=arcs.compose if arcs is not None else None,
                monitors=self._monitors,
                capture_output=not self.config.show_output,
            )
        if self.coverage_map is not None:
            # Each execution's own arcs, merged into the campaign's: what it added is the feedback.
            result.feedback = self.coverage_map.add(arcs, result.history)  # type: ignore[arg-type]
        return result

    def record(
        self, result: ExecutionResult, execution: int, shrink: bool = True, rerunnable: bool = True
    ) -> FoundBug | None:
        """The new bug of ``result`` (execution number ``execution``), minimized, written, confirmed, announced.

        ``None`` when the run passed or showed a bug already recorded. The
        framework must be active: minimization and the confirming replay run
        the target again. NotDeterministic when the written trace does not
        replay the bug: then there is no bug to announce. An inconclusive
        execution is kept in ``inconclusive``. ``shrink`` is False when
        ``result`` was minimized where it ran (a worker process);
        ``rerunnable`` is False for a crash of a worker process: running it
        here would kill this process, so its trace is written as recorded.
        """
        if result.inconclusive is not None:
            self.inconclusive.append(InconclusiveRun(execution, result.inconclusive))
            return None
        if result.rejected is not None:
            self.rejections.count(result.rejected)
            return None
        if result.bug is None:
            return None
        family = bug_family(result.bug)
        if family in self._seen:
            known = self._seen[family]
            if known is not None:
                known.hits += 1
            return None
        self._seen[family] = None
        # Memory exhausted: running it again here would exhaust it again in a process already near the
        # limit; its trace is written as recorded and replayed in a fresh process by `dnsse replay`.
        rerunnable = rerunnable and not is_exhausted(result.bug)
        if shrink and rerunnable:
            self._phase("minimizing")
            result = self.minimized(result, execution)
        trace = _trace_of(self.config, self.target, self.framework, result, execution, self.suite, sorted(self.pinned))
        path = write_trace(trace, self.config.out)
        if rerunnable:
            self._phase("confirming")
            confirm(path, lambda trace: self.follow(trace, execution), execution)
        self._phase("exploring")
        found = FoundBug(result.bug, execution, path, time.perf_counter() - self.started, trace.inputs)
        self._seen[family] = found
        self.found.append(found)
        if self._on_bug is not None:
            self._on_bug(found)
        return found

    def _phase(self, name: str) -> None:
        if self.on_phase is not None:
            self.on_phase(name)

    def rerun(self, chooser: Chooser) -> ExecutionResult:
        """Run the target with ``chooser`` outside the search (no coverage, no feedback); the framework must be active."""
        return run_execution(
            self.target,
            self.framework,
            chooser,
            self.config.limits,
            pinned=self.pinned,
            monitors=self._monitors,
            capture_output=not self.config.show_output,
        )

    def follow(self, trace: Trace, execution: int) -> ExecutionResult:
        """Replay ``trace`` strictly, as ``dnsse replay`` does."""
        with self._flown(ReplayChooser(trace.choices), execution) as chooser:
            return run_execution(
                self.target,
                self.framework,
                chooser,
                trace.limits,
                pinned=self.pinned,
                monitors=self._monitors,
                capture_output=not self.config.show_output,
                expected=Expected(trace.choices),
            )

    def minimized(self, result: ExecutionResult, execution: int) -> ExecutionResult:
        """The same bug with as few preemptions as minimization finds (the found run if none, or no minimizing)."""
        assert result.bug is not None
        # Each run of a hang waits out the wall-clock limit: too dear to try many; its schedule is short.
        if not self.config.minimize or result.bug.kind == BugKind.HANG:
            return result

        def run(chooser: Chooser, expected: Expected) -> ExecutionResult:
            # Without the coverage hook: shrinking runs are not part of the search.
            with self._flown(chooser, execution) as flown:
                return run_execution(
                    self.target,
                    self.framework,
                    flown,
                    self.config.limits,
                    pinned=self.pinned,
                    monitors=self._monitors,
                    capture_output=not self.config.show_output,
                    expected=expected,
                )

        smaller = minimize(run, result.choices, result.bug.signature())
        return smaller if smaller is not None else result

    @contextlib.contextmanager
    def _flown(self, chooser: Chooser, execution: int) -> Iterator[Chooser]:
        """``chooser``, its answers written to the flight recorder, if any, as those of execution ``execution``.

        A run that minimizes or confirms a bug may kill the process too (it
        tries other schedules and values): it is then told as a crash of
        that execution, with the choices it made.
        """
        if self.flight is None:
            yield chooser
            return
        self.flight.begin(execution)
        try:
            yield self.flight.wrap(chooser)
        finally:
            self.flight.end()

    def result(
        self,
        strategy: str,
        executions: int,
        verified: dict | None = None,
        engines: dict | None = None,
        search: dict[str, int] | None = None,
        unverified: str | None = None,
    ) -> CampaignResult:
        self.rejections.check_some_accepted(executions, bool(self.found))
        if self.inconclusive and verified is not None:
            # A run cut off by the wall clock was never judged: the search covered less than it says.
            verified = None
            unverified = (
                f"{len(self.inconclusive)} execution{'s' if len(self.inconclusive) != 1 else ''} hit the "
                "wall-clock limit and could not be judged"
            )
        if verified is not None:
            verified = with_delay_bound(verified, self.config.limits)
        return CampaignResult(
            target=str(self.target.spec),
            framework=self.framework.name,
            strategy=strategy,
            world_size=self.config.world_size,
            executions=executions,
            elapsed_s=time.perf_counter() - self.started,
            bugs=self.found,
            coverage=self.recorder.coverage() if self.recorder is not None else None,
            verified=verified,
            engines=engines,
            search=search or {},
            unverified=unverified,
            inconclusive=list(self.inconclusive),
            rejected=self.rejections.runs,
            semantics=getattr(self.framework, "semantics", None),
        )


def prepared_campaign(
    config: CampaignConfig,
    on_bug: Callable[[FoundBug], None] | None = None,
    on_start: Callable[[LoadedTarget, Framework], None] | None = None,
    feedback: bool = False,
    on_loaded: Callable[[], None] | None = None,
) -> Campaign:
    """A campaign whose target is loaded and checked (:meth:`Campaign.prepare`), then announced to ``on_start``.

    How every campaign whose executions run elsewhere (worker processes, Ray
    tasks) begins: a target that cannot load is bad input before any worker starts.
    ``on_loaded`` runs once the target's framework is imported, before its
    module runs (worker processes start their fork server then, to overlap).
    """
    campaign = Campaign(config, on_bug, feedback=feedback)
    if on_loaded is not None:
        on_loaded()
    with campaign.framework.activate():
        campaign.prepare()
        if on_start is not None:
            on_start(campaign.target, campaign.framework)
    return campaign


def advisor_setup(config: CampaignConfig, worker: int = 0, workers: int = 1) -> AdvisorSetup:
    """What the advisor of llm and hybrid reads: the target's source, the specs, the model (if any).

    Parallel workers each ask the model, so each gets its share of the call budget.
    """
    model = config.advisor
    if model is not None and workers > 1:
        calls = model.max_calls // workers + int(worker < model.max_calls % workers)
        model = dataclasses.replace(model, max_calls=calls)
    return AdvisorSetup(TargetSpec.parse(config.target, config.directory).path, tuple(config.specs), model)


def watch_for(campaign: Campaign, strategy: Strategy) -> None:
    """Attach the monitors a strategy learns from (llm, hybrid: the steps of every execution)."""
    for monitor in strategy.monitors:
        campaign.watch(monitor)


def with_delay_bound(verified: dict, limits: Limits) -> dict:
    """What an exhausted search covered, with the delay bound it covered it under (dnsse.engine.clock)."""
    delay = format_delay(limits.max_delay)
    return {
        **verified,
        "max_delay": "inf" if math.isinf(limits.max_delay) else limits.max_delay,
        "covers": f"{verified['covers']}; time as the program's sleeps, timeouts and steps make it, with the "
        f"agents that could run stalled for at most {delay} in all (--max-delay), and fair scheduling after "
        f"the first {limits.unfair_steps:,} steps",
    }


def _trace_of(
    config: CampaignConfig,
    target: LoadedTarget,
    framework: Framework,
    result: ExecutionResult,
    execution: int,
    suite: SpecSuite | None,
    pinned: list[str],
) -> Trace:
    assert result.bug is not None
    return Trace(
        target=str(target.spec),
        framework=framework.name,
        world_size=config.world_size,
        inputs={name: show_value(value) for name, value in result.inputs.items()},
        pinned=pinned,
        choices=result.choices,
        limits=config.limits,
        bug=result.bug,
        strategy=config.strategy,
        execution=execution,
        steps=result.steps,
        specs=suite.texts if suite is not None else [],
        faults=config.faults,
        source_sha256=target.source_sha256,
        hash_seed=current_hash_seed(),
        memory_limit=memory_limit(),
        stalls=result.stalls,
        directory=str(target.spec.directory or ""),
        root=str(project_root(target.spec.path)),
    )
