"""A campaign: many executions of one target under one strategy and budget."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

from dnsse.coverage.arcs import ArcRecorder, BranchCoverage
from dnsse.coverage.feedback import CoverageMap
from dnsse.coverage.recorder import arc_recorder
from dnsse.engine.bugs import Bug, BugKind
from dnsse.engine.clock import format_delay
from dnsse.engine.choices import Chooser, ReplayChooser
from dnsse.engine.determinism import Expected
from dnsse.engine.execution import Limits
from dnsse.engine.flight import FlightRecorder
from dnsse.engine.hash_seed import current_hash_seed
from dnsse.engine.inconclusive import Inconclusive
from dnsse.engine.memory import is_exhausted, memory_limit
from dnsse.engine.runner import ExecutionResult, Monitor, run_execution
from dnsse.engine.inputs import InputParameter, show_value
from dnsse.campaign.rejections import Rejections
from dnsse.engine.target import LoadedTarget, TargetSpec
from dnsse.errors import BadInput
from dnsse.frameworks.base import Framework, framework_named
from dnsse.campaign.confirm import confirm
from dnsse.campaign.known_failures import KnownFailures, remember, replay_known
from dnsse.campaign.relocation import project_root
from dnsse.search.minimize import minimize
from dnsse.campaign.trace import Trace, write_trace
from dnsse.search.advisor_setup import AdvisorSetup
from dnsse.campaign.bug_family import bug_family
from dnsse.campaign.control import CampaignControl
from dnsse.search.registry import DEFAULT, make_strategy
from dnsse.search.strategy import Strategy
from dnsse.spec.sources import load_suite
from dnsse.spec.watch import SpecSuite

if TYPE_CHECKING:
    from dnsse.advisor.settings import ModelSettings


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
    # Parallel worker processes on this machine (see dnsse.campaign.local_processes).
    workers: int = 1
    # Pinned inputs, NAME -> VALUE text as given to --input.
    inputs: dict[str, str] = field(default_factory=dict)
    # Let the program's prints through in every execution, instead of capturing them.
    show_output: bool = False
    # Where a launch command's relative paths start (None: the working directory).
    directory: Path | None = None
    # Run the executions as tasks on the Ray cluster at this address (see dnsse.campaign.ray_batches).
    ray_address: str | None = None
    # The language model the advisor of llm and hybrid asks (None: the offline advisor only).
    advisor: ModelSettings | None = None
    # Run the executions in a worker process even with one worker (see dnsse.campaign.local_processes): a program
    # that kills its process (os._exit, a segfault, a fatal signal) is a crash bug, not the caller's death.
    # Costs the start of one process (2-3 s, torch imported anew) per campaign.
    contained: bool = False
    # Replay the known failures of the target (OUT/known/) before exploring, and keep the bugs found there
    # (see dnsse.campaign.known_failures); the command line's default, off with --no-db.
    known_failures: bool = False


@dataclass
class FoundBug:
    bug: Bug
    execution: int
    trace_path: Path
    elapsed_s: float
    # The input values of the bug's execution, as JSON shows them.
    inputs: dict[str, object] = field(default_factory=dict)
    # Executions that showed this bug (the same failure, whichever agents played which part), this one included.
    hits: int = 1


@dataclass
class InconclusiveRun:
    """An execution that hit the wall-clock limit: not a bug, not a pass (see dnsse.engine.inconclusive)."""

    execution: int
    inconclusive: Inconclusive

    def to_json(self) -> dict:
        return {"execution": self.execution, **self.inconclusive.to_json()}

    @staticmethod
    def from_json(raw: dict) -> InconclusiveRun:
        return InconclusiveRun(int(raw["execution"]), Inconclusive.from_json(raw))


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
    # Why an exhausted systematic search promises nothing, when it does not.
    unverified: str | None = None
    coverage: BranchCoverage | None = None
    # Per engine of a coverage-guided strategy: executions, new branches and interleavings, bugs.
    engines: dict[str, dict[str, int]] | None = None
    # Counts the strategy reports about its search (pct: spinning agents it dropped).
    search: dict[str, int] = field(default_factory=dict)
    # The signal (SIGINT, SIGTERM) that stopped the campaign before its budget; None when it was not stopped.
    interrupted: int | None = None
    # Executions that hit the wall-clock limit: with any, nothing is verified.
    inconclusive: list[InconclusiveRun] = field(default_factory=list)
    # llm and hybrid: per advisor, its calls, tokens, latency, cache hits and hints proposed, tried, useful.
    advisor: dict[str, dict] | None = None
    # torch: the backend semantics modelled ("gloo" or "nccl"); None for other frameworks.
    semantics: str | None = None
    # What the known failures replayed first did (None: none were replayed).
    known: KnownFailures | None = None
    # Executions whose input the program rejected (dnsse.assume, argument checking): never bugs.
    rejected: int = 0


def load(
    target_text: str, framework_name: str, world_size: int, faults: bool = True, directory: Path | None = None
) -> tuple[LoadedTarget, Framework]:
    """Parse and compile the target and pick its framework; BadInput on any defect.

    ``directory``: where a launch command's relative paths start (None: here).
    """
    if world_size < 1:
        raise BadInput(f"--world-size must be at least 1, got {world_size}")
    target = LoadedTarget(TargetSpec.parse(target_text, directory), framework_name)
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


class Campaign:
    """What every execution of one campaign shares, and the bugs it found so far.

    The sequential loop and the parallel parent record bugs here (deduplicate,
    minimize, write the trace, announce); parallel workers run their
    executions through it, so specs, faults, limits and coverage apply alike.
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
        # One bug once: each bug found so far, by its family (see dnsse.campaign.bug_family); None while
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


def run_campaign(
    config: CampaignConfig,
    on_bug: Callable[[FoundBug], None] | None = None,
    on_start: Callable[[LoadedTarget, Framework], None] | None = None,
    on_execution: Callable[[int, ExecutionResult, ArcRecorder | None], None] | None = None,
    control: CampaignControl | None = None,
) -> CampaignResult:
    """Run executions until the budget, or the first bug unless ``keep_going``.

    ``on_execution`` sees every execution (its number from 1, its result, and
    the arcs recorded so far when ``config.coverage`` is on). With
    ``config.workers > 1`` or ``config.contained`` the executions run in
    worker processes, and with ``config.ray_address`` as tasks on a Ray
    cluster. Otherwise they run in this process: a program that kills its
    process (``os._exit``, a segfault) kills the caller too.
    ``control`` (the command line's) stops the loop on a signal, saves the
    state for ``--resume`` and continues a resumed campaign (see
    dnsse.campaign.control).
    """
    if config.workers < 1:
        raise BadInput(f"--workers must be at least 1, got {config.workers}")
    strategy = make_strategy(
        config.strategy, config.seed, config.pct_depth, config.preemption_bound, advisor_setup(config)
    )
    if config.budget is not None and config.budget < 1:
        raise BadInput(f"--budget must be at least 1 execution, got {config.budget}")
    if config.ray_address is not None:
        # Imported here because the cluster campaign is built on this module.
        from dnsse.campaign.ray_batches import run_on_ray

        return run_on_ray(config, strategy, on_bug, on_start, on_execution, control)
    if config.workers > 1 or config.contained:
        # Imported here because the parallel campaign is built on this module.
        from dnsse.campaign.local_processes import run_parallel

        return run_parallel(config, strategy, on_bug, on_start, on_execution, control)
    campaign = Campaign(config, on_bug, feedback=strategy.wants_feedback)
    watch_for(campaign, strategy)
    control = control if control is not None else CampaignControl(config.out, saving=False)
    if control.recorder is not None:
        campaign.watch(control.recorder)
        campaign.flight = control.recorder
    campaign.on_phase = control.on_phase
    with campaign.framework.activate():
        campaign.prepare()
        # After prepare: restoring what a strategy learnt may run the target again.
        executions = control.restore(campaign, strategy)
        control.started(campaign)
        if on_start is not None:
            on_start(campaign.target, campaign.framework)
        # A resumed campaign replayed them when it began.
        known = replay_known(campaign) if config.known_failures and executions == 0 else None
        stop = bool(campaign.found) and not config.keep_going
        while not stop and not strategy.exhausted and (config.budget is None or executions < config.budget):
            if campaign.out_of_time() or control.stop_signal is not None:
                break
            try:
                result = campaign.execute(control.chooser(executions + 1, strategy.chooser_for(executions)))
            finally:
                control.ended()
            executions += 1
            strategy.observe(result)
            if on_execution is not None:
                on_execution(executions, result, campaign.recorder)
            ended = campaign.record(result, executions) is not None or result.inconclusive is not None
            # An inconclusive execution stops the campaign like a bug: the next ones would likely hang too.
            stop = ended and not config.keep_going
            control.after(campaign, strategy, executions, result, last=stop)
            if stop:
                break
    control.finish(lambda: control.save(campaign, strategy, executions))
    if config.known_failures:
        remember(campaign, campaign.found)
    strategy.close()
    # A bug-free exhausted search is a statement; with a bug, the bug is the news.
    finished_clean = strategy.exhausted and not campaign.found
    verified = strategy.verified() if finished_clean else None
    unverified = strategy.unverified() if finished_clean else None
    result = campaign.result(
        strategy.name, executions, verified, strategy.engine_report(), strategy.notes(), unverified
    )
    result.interrupted = control.stop_signal
    result.advisor = strategy.advisor_report()
    result.known = known
    return result


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


def pin_inputs(parameters: list[InputParameter], given: dict[str, str]) -> dict[str, object]:
    """The values of ``--input NAME=VALUE`` options; BadInput for an unknown name or a bad value."""
    by_name = {parameter.name: parameter for parameter in parameters}
    pinned = {}
    for name, text in given.items():
        if name not in by_name:
            known = ", ".join(by_name) or "(none: the entry point has no typed keyword parameters with defaults)"
            raise BadInput(f"--input {name}=...: the entry point has no input {name!r}; its inputs are: {known}")
        pinned[name] = by_name[name].parse(text)
    return pinned


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
