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
from types import ModuleType

from dnsse.campaign.config import CampaignResult
from dnsse.campaign.executor import CampaignRun
from dnsse.campaign.ray_progress import save_on_ray
from dnsse.engine.isolation import remove_spare_directories
from dnsse.campaign.ray_workers import WAIT_S, arcs_of, campaign_for, connect, task_settings, timed
from dnsse.campaign.worker_campaign import FirstSight
from dnsse.campaign.worker_reports import semantics_of
from dnsse.engine.runner import ExecutionResult
from dnsse.search.dfs import DfsStrategy
from dnsse.search.dfs_share import DfsShare, Unit
from dnsse.campaign.dfs_progress import resumed_division
from dnsse.search.dfs_slice import Slice, SliceLimits, run_slice

# Executions per task: a few, since a task's frontier can only be divided once it returns.
SLICE = 8


def run_dfs(ray: ModuleType, run: CampaignRun) -> CampaignResult:
    """The ``dfs`` campaign, its subtrees run as Ray tasks.

    ``control``'s stop signal stops it at the next slice; its tree is saved for ``--resume`` (see dnsse.campaign.ray_progress).
    """
    config, control = run.config, run.control
    campaign = run.prepared()
    share = DfsShare(config.preemption_bound)
    # Before joining the cluster: a saved state of another campaign is refused at once.
    intake = run.intake(campaign, executions=resumed_division(control, campaign, share))
    workers = connect(ray, config)
    # No retry by Ray: a slice whose worker the program killed is run again contained (see ray_contained).
    task = ray.remote(num_cpus=1, max_retries=0)(slice_task)
    contained = ray.remote(num_cpus=1, max_retries=0)(contained_slice_task)
    settings = task_settings(config, campaign.target)
    flying: dict[object, tuple[Unit, int]] = {}  # task ref -> its unit and executions granted
    carry_on = False  # right after a slice came back, one task carries on deepest, near where it was
    stopped = False
    try:
        while True:
            stopped = stopped or campaign.out_of_time() or intake.stopping or control.stop_signal is not None
            while not stopped and len(flying) < workers:
                granted = sum(n for _, n in flying.values())
                left = None if config.budget is None else config.budget - intake.executions - granted
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
            ready, _ = ray.wait(list(flying), num_returns=1, timeout=WAIT_S)
            if not ready:
                continue
            unit, size = flying.pop(ready[0])
            try:
                answer = json.loads(ray.get(ready[0]))
            except ray.exceptions.WorkerCrashedError:
                # The program killed the Ray worker: the slice again, in a process that may die.
                flying[contained.remote(settings, unit.prefix, size)] = (unit, size)
                continue
            for report in answer["reports"]:
                intake.take_report(None, report)
            if answer.get("lost"):
                share.lose(unit)  # the rest of its subtree would crash again: nothing is verified
            else:
                share.absorb(unit, Slice.from_json(answer["slice"]))
            carry_on = True
            if control.due(campaign):
                save_on_ray(control, campaign, "dfs", intake.executions, share)
    finally:
        for ref in flying:
            ray.cancel(ref)
    control.finish(lambda: save_on_ray(control, campaign, "dfs", intake.executions, share))
    summary = share.summary()
    clean = summary.exhausted and not campaign.found
    return run.result(
        campaign,
        intake,
        verified=summary.verified() if clean else None,
        unverified=summary.unverified() if clean else None,
        search={"workers": workers, "units": share.units},
    )


def contained_slice_task(settings_text: str, prefix: list[dict], size: int) -> str:
    """The body of a Ray task that runs a slice whose worker died (see dnsse.campaign.ray_contained)."""
    from dnsse.campaign.ray_contained import run_slice_contained

    return run_slice_contained(settings_text, prefix, size)


def slice_task(settings_text: str, prefix: list[dict], size: int) -> str:
    """The body of a Ray task: up to ``size`` executions below ``prefix``; reports and slice as JSON."""
    campaign = campaign_for(settings_text)
    reports: list[dict] = []
    # The task minimizes the bugs it finds: a crash of the driver would end the campaign.
    sight = FirstSight(campaign)

    def execute(search: DfsStrategy, number: int) -> ExecutionResult:
        started = time.perf_counter()
        result = campaign.execute(search.chooser_for(number))
        reports.append(timed(sight.report(number, result), time.perf_counter() - started))
        return result

    try:
        with campaign.framework.activate():
            done = run_slice(campaign.config.preemption_bound, prefix, SliceLimits(size), execute)
    finally:
        remove_spare_directories()  # the cluster may kill this worker, which removes nothing then
    if reports:
        reports[-1].update(arcs=arcs_of(campaign), semantics=semantics_of(campaign.framework))
    return json.dumps({"reports": reports, "slice": done.to_json()})
