"""Campaigns on a real Ray cluster (``--ray-address ADDR|auto``, DESIGN §7).

The driver (this process) connects to the cluster and hands out the
campaign's execution indices in batches, each batch one Ray task. A task
rebuilds the campaign from plain JSON settings, runs its indices with a
strategy of its own seeded by the campaign seed, and returns one JSON report
per execution: nothing of ours is pickled but the function itself, and
traces stay JSON. A batch depends only on (settings, indices), so the same
seed gives the same executions whichever worker runs a batch and however
many workers there are; the driver takes the batches in index order, so it
also finds the same first bug.

A program that kills its process kills the Ray worker that runs its batch:
the driver then runs that batch again in child processes that may die
(:mod:`dnsse.campaign.ray_contained`), where the execution that kills one is
a ``crash`` bug with a replayable trace, and the campaign goes on.

The driver owns the findings, as the parallel parent does: it deduplicates
bugs (each task minimized its own), writes their traces and announces them; without
``keep_going`` it stops handing out batches after the first bug and cancels
those in flight.

Inside a task ``ray`` is the real Ray; a Ray target's own ``import ray``
still gets the controlled runtime, which the framework installs for the
length of the batch. The dnsse package travels to the workers with the task
(``py_modules``); the target file must be readable at the same path on
every node, as with a shared file system.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from pathlib import Path
from typing import Callable

import dnsse
from dnsse.coverage.arcs import ArcRecorder
from dnsse.coverage.recorder import arc_recorder
from dnsse.engine.memory import is_exhausted
from dnsse.engine.runner import ExecutionResult
from dnsse.engine.target import LoadedTarget
from dnsse.errors import BadInput
from dnsse.frameworks.base import Framework
from dnsse.campaign.campaign import (
    Campaign,
    CampaignConfig,
    CampaignResult,
    FoundBug,
    advisor_setup,
    prepared_campaign,
)
from dnsse.campaign.settings import campaign_settings, config_from_settings
from dnsse.campaign.control import CampaignControl
from dnsse.campaign.ray_progress import resumed_at, save_on_ray
from dnsse.search.registry import make_strategy
from dnsse.search.strategy import Division, Strategy
from dnsse.campaign.worker_reports import execution_report, merge_reported_arcs, result_from_report
from dnsse.campaign.worker_totals import WorkerTotals

# Executions per task: enough to pay for a task's overhead, few enough to stop soon after a bug.
BATCH = 16
# Batches in flight per worker, so that no worker waits for the driver.
IN_FLIGHT_PER_WORKER = 2
# How long the driver waits for a task before it looks for a stop signal.
WAIT_S = 0.5


def run_on_ray(
    config: CampaignConfig,
    strategy: Strategy,
    on_bug: Callable[[FoundBug], None] | None = None,
    on_start: Callable[[LoadedTarget, Framework], None] | None = None,
    on_execution: Callable[[int, ExecutionResult, ArcRecorder | None], None] | None = None,
    control: CampaignControl | None = None,
) -> CampaignResult:
    """The campaign of :func:`~dnsse.campaign.campaign.run_campaign`, its executions run as Ray tasks.

    ``control``'s stop signal stops the campaign at the next batch; its
    state is saved for ``--resume`` (see dnsse.campaign.ray_progress).
    """
    try:
        import ray
    except ImportError:
        raise BadInput("--ray-address needs Ray installed in this environment (pip install ray)") from None
    if strategy.division in (Division.TREE, Division.ONE_PROCESS):
        if strategy.division is Division.ONE_PROCESS:
            raise BadInput(
                f"the {strategy.name} search runs in one process: a Ray cluster divides only the dfs search; "
                f"leave --ray-address out for {strategy.name}"
            )
        # Imported here because the divided search is built on this module.
        from dnsse.campaign.ray_dfs import run_dfs_on_ray

        return run_dfs_on_ray(ray, config, on_bug, on_start, on_execution, control)
    if strategy.division is Division.ROUNDS:
        if control is not None and control.resume is not None:
            raise BadInput(
                f"--resume on a Ray cluster continues batch strategies and dfs, not {strategy.name}, whose actors' "
                "rounds are not saved: run the campaign again, or resume it on this machine with --workers"
            )
        # Imported here because the divided search is built on this module.
        from dnsse.campaign.ray_rounds import run_directed_on_ray

        return run_directed_on_ray(ray, config, strategy, on_bug, on_start, on_execution)
    campaign = prepared_campaign(config, on_bug, on_start, feedback=strategy.wants_feedback)
    control = control if control is not None else CampaignControl(config.out, saving=False)
    # Before joining the cluster: a saved state of another campaign is refused at once.
    next_index = resumed_at(control, campaign, strategy.name)
    workers = _connect(ray, config)
    # No retry by Ray: a batch whose worker the program killed is run again contained (see ray_contained).
    task = ray.remote(num_cpus=1, max_retries=0)(_run_batch)
    contained = ray.remote(num_cpus=1, max_retries=0)(_contained_batch)
    settings = _settings(config, campaign.target)
    calls = CallBudget(config.advisor.max_calls if config.advisor is not None else 0, workers * IN_FLIGHT_PER_WORKER)
    totals = WorkerTotals()
    budget = config.budget
    flying: dict[object, int] = {}  # task ref -> first index of its batch
    sizes: dict[int, int] = {}  # first index -> size of its batch
    finished: dict[int, list[dict]] = {}  # first index -> reports, until their turn comes
    turn = next_index  # the first index not yet taken in order
    executions = next_index
    stopped = False
    try:
        while True:
            while not stopped and len(flying) < workers * IN_FLIGHT_PER_WORKER and (budget is None or next_index < budget):
                if campaign.out_of_time() or control.stop_signal is not None:
                    stopped = True
                    break
                size = BATCH if budget is None else min(BATCH, budget - next_index)
                flying[task.remote(settings, next_index, size, calls.share(next_index))] = next_index
                sizes[next_index] = size
                next_index += size
            if not flying or control.stop_signal is not None:
                break
            # A while at most, so that a signal's handler runs (it runs between Python's steps).
            ready, _ = ray.wait(list(flying), num_returns=1, timeout=WAIT_S)
            if not ready:
                continue
            first = flying.pop(ready[0])
            try:
                finished[first] = json.loads(ray.get(ready[0]))
            except ray.exceptions.WorkerCrashedError:
                # The program killed the Ray worker: the batch again, in processes that may die.
                flying[contained.remote(settings, first, sizes[first])] = first
                continue
            if finished[first]:
                adopt_semantics(campaign, finished[first][-1])
                totals.update(first, finished[first][-1])
                calls.spent(first, finished[first][-1].get("advisor"))
            while turn in finished and not stopped:
                reports = finished.pop(turn)
                turn += len(reports)
                for report in reports:
                    executions += 1
                    if take_report(campaign, report, on_execution):
                        stopped = True
                        break
            if stopped:
                break
            if control.due(campaign):
                save_on_ray(control, campaign, strategy.name, executions)
    finally:
        for ref in flying:
            ray.cancel(ref)
    control.finish(lambda: save_on_ray(control, campaign, strategy.name, executions))
    result = campaign.result(strategy.name, executions, engines=totals.engines(), search=totals.notes())
    result.advisor = totals.advisor()
    result.interrupted = control.stop_signal
    return result


def take_report(
    campaign: Campaign,
    report: dict,
    on_execution: Callable[[int, ExecutionResult, ArcRecorder | None], None] | None,
) -> bool:
    """One execution a task reported, seen and its bug recorded; whether the campaign stops there."""
    result = result_from_report(report)
    merge_reported_arcs(campaign.recorder, report["arcs"])
    if on_execution is not None:
        on_execution(report["index"] + 1, result, campaign.recorder)
    keep_going = campaign.config.keep_going
    if result.inconclusive is not None:
        campaign.record(result, report["index"] + 1)
        return not keep_going
    if result.rejected is not None:
        campaign.record(result, report["index"] + 1)  # counted, never a bug
        return False
    if result.bug is not None:
        with campaign.framework.activate():
            # A task minimized its bug (``minimized``): a run of the program may kill the process it runs in.
            # A crash is not run again here at all: it would kill this process too.
            # A batch run again contained (``contained``) comes from a program that kills processes:
            # its bugs are not minimized here either, since minimizing runs other schedules.
            crashed = bool(report.get("crashed"))
            smaller = result_from_report(report["minimized"]) if "minimized" in report else result
            shrink = not crashed and "minimized" not in report and not report.get("contained")
            campaign.record(smaller, report["index"] + 1, shrink=shrink, rerunnable=not crashed)
        return bool(campaign.found) and not keep_going
    return False


class CallBudget:
    """The model calls of ``--llm-calls``, handed to batches: each task asks the model with its own share.

    A batch's advisor is new in each task, so each gets a share of the calls
    not yet spent (``slots``: about how many batches are in flight at once);
    what a finished batch spent, calls and cache hits, is taken off.
    """

    def __init__(self, calls: int, slots: int) -> None:
        self.left = calls
        self.slots = max(1, slots)
        self._handed: dict[int, int] = {}

    def share(self, batch: int) -> int:
        """The calls the batch that starts at index ``batch`` may make."""
        given = max(1, self.left // self.slots) if self.left > 0 else 0
        self.left -= given
        self._handed[batch] = given
        return given

    def spent(self, batch: int, advisor: dict | None) -> None:
        """Batch ``batch`` is back: the calls it was handed but did not make return to the pool."""
        model = (advisor or {}).get("model") or {"calls": 0, "cache_hits": 0}
        handed = self._handed.pop(batch, 0)
        self.left += max(0, handed - model["calls"] - model["cache_hits"])


def _connect(ray: object, config: CampaignConfig) -> int:
    """Join the cluster at ``config.ray_address``; the number of workers to keep busy."""
    try:
        if not ray.is_initialized():  # type: ignore[attr-defined]
            ray.init(  # type: ignore[attr-defined]
                address=config.ray_address,
                log_to_driver=False,
                logging_level=logging.ERROR,
                runtime_env={"py_modules": [str(Path(dnsse.__file__).parent)]},
            )
    except Exception as error:  # noqa: BLE001 - whatever Ray says, the user must fix the address or cluster
        raise BadInput(
            f"cannot join the Ray cluster at {config.ray_address!r}: {type(error).__name__}: {error}. "
            "Give the address `ray start --head` printed (HOST:PORT), or auto for the cluster of this machine"
        ) from None
    if config.workers > 1:
        return config.workers
    return max(1, int(ray.cluster_resources().get("CPU", 1)))  # type: ignore[attr-defined]


def _settings(config: CampaignConfig, target: LoadedTarget) -> str:
    # A Ray worker's output reaches no one: it is captured, and shown with the bug it goes with.
    return json.dumps({**campaign_settings(config, target), "show_output": False})


# A worker process keeps the campaign it loaded for the next batches of the same settings.
_loaded: dict[str, Campaign] = {}


def campaign_for(settings_text: str) -> Campaign:
    """The campaign of these settings, loaded once per worker process, with a fresh arc recorder."""
    campaign = _loaded.get(settings_text)
    if campaign is None:
        config = config_from_settings(json.loads(settings_text))
        campaign = Campaign(config, feedback=make_strategy(config.strategy, config.seed, config.pct_depth).wants_feedback)
        with campaign.framework.activate():
            campaign.prepare()
        _loaded.clear()
        _loaded[settings_text] = campaign
    if campaign.recorder is not None:
        campaign.recorder = arc_recorder(campaign.target.source_files)  # each task reports its own arcs
        if campaign.coverage_map is not None:
            campaign.coverage_map.recorder = campaign.recorder
    return campaign


def reported(
    campaign: Campaign, index: int, result: ExecutionResult, elapsed_s: float, shrunk: set[tuple[str, str]]
) -> dict:
    """Execution ``index`` as a task returns it, with its bug minimized (``minimized``) the first time the task sees it.

    Tasks minimize, not the driver: minimizing runs other schedules, which
    may kill the process they run in, and a Ray worker that dies is run
    again contained (see dnsse.campaign.ray_contained), unlike the driver.
    The report itself stays the execution as it ran. The framework must be active.
    """
    report = report_of(index, result, elapsed_s)
    if result.bug is not None and not is_exhausted(result.bug) and result.bug.signature() not in shrunk:
        shrunk.add(result.bug.signature())
        report["minimized"] = report_of(index, campaign.minimized(result, index + 1), elapsed_s)
    return report


def report_of(index: int, result: ExecutionResult, elapsed_s: float) -> dict:
    """One execution as a task returns it: a worker process's report, timed by the task (arcs go with its last report)."""
    return {**execution_report(index, result), "elapsed_s": elapsed_s, "arcs": {}}


def semantics_of(campaign: Campaign) -> str | None:
    """What a task's executions modelled (torch: "gloo" or "nccl"), for the driver's report."""
    return getattr(campaign.framework, "semantics", None)


def adopt_semantics(campaign: Campaign, last_report: dict) -> None:
    """The driver's framework takes over what a task's executions modelled, so the report says it as without a cluster."""
    adopt = getattr(campaign.framework, "adopt_semantics", None)
    if adopt is not None and last_report.get("semantics") is not None:
        adopt(last_report["semantics"])


def arcs_of(campaign: Campaign) -> dict[str, list[list[int]]]:
    """Every arc the task's recorder saw, as JSON lists."""
    if campaign.recorder is None:
        return {}
    return {path: [list(arc) for arc in sorted(arcs)] for path, arcs in campaign.recorder.arcs.items()}


def _contained_batch(settings_text: str, first: int, size: int) -> str:
    """The body of a Ray task that runs a batch whose worker died (see dnsse.campaign.ray_contained)."""
    from dnsse.campaign.ray_contained import run_batch_contained

    return run_batch_contained(settings_text, first, size)


def _run_batch(settings_text: str, first: int, size: int, model_calls: int = 0) -> str:
    """The body of a Ray task: executions ``first .. first+size-1``, as a JSON list of reports.

    The advisor of llm and hybrid asks the model (if one is set) at most
    ``model_calls`` times. The last report carries the strategy's counts.
    """
    campaign = campaign_for(settings_text)
    config = campaign.config
    setup = advisor_setup(config)
    if setup.model is not None:
        setup = dataclasses.replace(setup, model=dataclasses.replace(setup.model, max_calls=model_calls))
    strategy = make_strategy(config.strategy, config.seed, config.pct_depth, advisor=setup)
    monitors = list(strategy.monitors)
    for monitor in monitors:
        campaign.watch(monitor)
    reports = []
    shrunk: set[tuple[str, str]] = set()
    try:
        with campaign.framework.activate():
            for index in range(first, first + size):
                started = time.perf_counter()
                result = campaign.execute(strategy.chooser_for(index))
                strategy.observe(result)
                reports.append(reported(campaign, index, result, time.perf_counter() - started, shrunk))
    finally:
        for monitor in monitors:
            campaign.unwatch(monitor)
    strategy.close()
    if reports:
        reports[-1].update(
            arcs=arcs_of(campaign), semantics=semantics_of(campaign), notes=strategy.notes(), engines=strategy.engine_report(), advisor=strategy.advisor_report()
        )
    return json.dumps(reports)
