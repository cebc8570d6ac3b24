"""``dfs`` with ``--ray-address``: Ray tasks explore disjoint subtrees (DESIGN §7).

The driver holds the shared part of the tree
(:class:`~dnsse.search.dfs_share.DfsShare`) and keeps ``workers`` tasks in
flight, each a slice of at most ``SLICE`` executions below one unit's prefix
(:func:`~dnsse.search.dfs_slice.run_slice`). A task cannot be asked to yield
as a local worker can, so slices are short: every task hands its frontier
back, and the driver divides it again among the next tasks. A task returns
its executions' reports and its slice as one JSON string; the driver
records bugs as :mod:`dnsse.campaign.ray_batches` does. A slice whose Ray
worker the program killed runs again in a child process
(:mod:`dnsse.campaign.ray_contained`): the execution that kills it is a
``crash`` bug with a replayable trace, and its unit is lost (nothing is
verified) while the search goes on.
"""

from __future__ import annotations

import json
import time
from typing import Callable

from dnsse.coverage.arcs import ArcRecorder
from dnsse.engine.runner import ExecutionResult
from dnsse.engine.target import LoadedTarget
from dnsse.frameworks.base import Framework
from dnsse.campaign.campaign import CampaignConfig, CampaignResult, FoundBug, prepared_campaign
from dnsse.search.dfs import DfsStrategy
from dnsse.search.dfs_share import DfsShare, Unit
from dnsse.search.dfs_slice import Slice, SliceLimits, run_slice
from dnsse.campaign.worker_reports import merge_reported_arcs, result_from_report
from dnsse.campaign.control import CampaignControl
from dnsse.campaign.ray_batches import (
    WAIT_S, _connect, _settings, adopt_semantics, arcs_of, campaign_for, reported, semantics_of,
)
from dnsse.search.dfs_share_state import resumed_division
from dnsse.campaign.ray_progress import save_on_ray

# Executions per task: a few, since a task's frontier can only be divided once it returns.
SLICE = 8


def run_dfs_on_ray(
    ray: object,
    config: CampaignConfig,
    on_bug: Callable[[FoundBug], None] | None = None,
    on_start: Callable[[LoadedTarget, Framework], None] | None = None,
    on_execution: Callable[[int, ExecutionResult, ArcRecorder | None], None] | None = None,
    control: CampaignControl | None = None,
) -> CampaignResult:
    """The ``dfs`` campaign of :func:`~dnsse.campaign.campaign.run_campaign`, its subtrees run as Ray tasks.

    ``control``'s stop signal stops it at the next slice; its tree is saved for ``--resume`` (see dnsse.campaign.ray_progress).
    """
    campaign = prepared_campaign(config, on_bug, on_start)
    control = control if control is not None else CampaignControl(config.out, saving=False)
    share = DfsShare(config.preemption_bound)
    # Before joining the cluster: a saved state of another campaign is refused at once.
    executions = resumed_division(control, campaign, share)
    workers = _connect(ray, config)
    # No retry by Ray: a slice whose worker the program killed is run again contained (see ray_contained).
    task = ray.remote(num_cpus=1, max_retries=0)(_run_dfs_slice)  # type: ignore[attr-defined]
    contained = ray.remote(num_cpus=1, max_retries=0)(_contained_slice)  # type: ignore[attr-defined]
    settings = _settings(config, campaign.target)
    flying: dict[object, tuple[Unit, int]] = {}  # task ref -> its unit and executions granted
    carry_on = False  # right after a slice came back, one task carries on deepest, near where it was
    stopped = False
    try:
        while True:
            stopped = stopped or campaign.out_of_time() or (bool(campaign.found) and not config.keep_going)
            stopped = stopped or control.stop_signal is not None
            while not stopped and len(flying) < workers:
                left = None if config.budget is None else config.budget - executions - sum(n for _, n in flying.values())
                if left is not None and left <= 0:
                    break
                unit = share.take(deepest=carry_on)
                if unit is None:
                    break
                carry_on = False
                size = SLICE if left is None else min(SLICE, left)
                flying[task.remote(settings, unit.prefix, size)] = (unit, size)
            if not flying or stopped:
                break  # tasks still in flight are cancelled: their executions are not counted
            # A while at most, so that a signal's handler runs (it runs between Python's steps).
            ready, _ = ray.wait(list(flying), num_returns=1, timeout=WAIT_S)  # type: ignore[attr-defined]
            if not ready:
                continue
            unit, size = flying.pop(ready[0])
            try:
                answer = json.loads(ray.get(ready[0]))  # type: ignore[attr-defined]
            except ray.exceptions.WorkerCrashedError:  # type: ignore[attr-defined]
                # The program killed the Ray worker: the slice again, in a process that may die.
                flying[contained.remote(settings, unit.prefix, size)] = (unit, size)
                continue
            if answer["reports"]:
                adopt_semantics(campaign, answer["reports"][-1])
            for report in answer["reports"]:
                executions += 1
                result = result_from_report(report)
                merge_reported_arcs(campaign.recorder, report["arcs"])
                if on_execution is not None:
                    on_execution(executions, result, campaign.recorder)
                if result.inconclusive is not None:
                    campaign.record(result, executions)
                    stopped = stopped or not config.keep_going  # like a bug: the next would likely hang too
                elif result.bug is not None and (config.keep_going or not campaign.found):
                    with campaign.framework.activate():
                        # Tasks minimize their bugs; a crash is not run again here: it would kill this process too.
                        smaller = result_from_report(report.get("minimized") or report)
                        campaign.record(smaller, executions, shrink=False, rerunnable=not report.get("crashed"))
            if answer.get("lost"):
                share.lose(unit)  # the rest of its subtree would crash again: nothing is verified
            else:
                share.absorb(unit, Slice.from_json(answer["slice"]))
            carry_on = True
            if control.due(campaign):
                save_on_ray(control, campaign, "dfs", executions, share)
    finally:
        for ref in flying:
            ray.cancel(ref)  # type: ignore[attr-defined]
    control.finish(lambda: save_on_ray(control, campaign, "dfs", executions, share))
    summary = share.summary()
    clean = summary.exhausted and not campaign.found
    result = campaign.result(
        "dfs",
        executions,
        verified=summary.verified() if clean else None,
        search={"workers": workers, "units": share.units},
        unverified=summary.unverified() if clean else None,
    )
    result.interrupted = control.stop_signal
    return result


def _contained_slice(settings_text: str, prefix: list[dict], size: int) -> str:
    """The body of a Ray task that runs a slice whose worker died (see dnsse.campaign.ray_contained)."""
    from dnsse.campaign.ray_contained import run_slice_contained

    return run_slice_contained(settings_text, prefix, size)


def _run_dfs_slice(settings_text: str, prefix: list[dict], size: int) -> str:
    """The body of a Ray task: up to ``size`` executions below ``prefix``; reports and slice as JSON."""
    campaign = campaign_for(settings_text)
    reports: list[dict] = []
    shrunk: set[tuple[str, str]] = set()

    def execute(search: DfsStrategy, number: int) -> ExecutionResult:
        started = time.perf_counter()
        result = campaign.execute(search.chooser_for(number))
        reports.append(reported(campaign, number, result, time.perf_counter() - started, shrunk))
        return result

    with campaign.framework.activate():
        done = run_slice(campaign.config.preemption_bound, prefix, SliceLimits(size), execute)
    if reports:
        reports[-1].update(arcs=arcs_of(campaign), semantics=semantics_of(campaign))
    return json.dumps({"reports": reports, "slice": done.to_json()})
