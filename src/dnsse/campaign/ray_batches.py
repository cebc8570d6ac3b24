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

import json
import time
from types import ModuleType

from dnsse.campaign.config import CampaignResult
from dnsse.campaign.executor import CampaignRun
from dnsse.campaign.ray_progress import resumed_at, save_on_ray
from dnsse.engine.isolation import remove_spare_directories
from dnsse.campaign.ray_workers import WAIT_S, arcs_of, campaign_for, connect, task_settings, timed
from dnsse.campaign.worker_campaign import FirstSight, strategy_for
from dnsse.campaign.worker_reports import semantics_of

# Executions per task: enough to pay for a task's overhead, few enough to stop soon after a bug.
BATCH = 16
# Batches in flight per worker, so that no worker waits for the driver.
IN_FLIGHT_PER_WORKER = 2


def run_batches(ray: ModuleType, run: CampaignRun) -> CampaignResult:
    """The campaign's executions in batches of Ray tasks, taken in index order.

    ``control``'s stop signal stops the campaign at the next batch; its
    state is saved for ``--resume`` (see dnsse.campaign.ray_progress).
    """
    config, strategy, control = run.config, run.strategy, run.control
    campaign = run.prepared()
    # Before joining the cluster: a saved state of another campaign is refused at once.
    next_index = resumed_at(control, campaign, strategy.name)
    workers = connect(ray, config)
    # No retry by Ray: a batch whose worker the program killed is run again contained (see ray_contained).
    task = ray.remote(num_cpus=1, max_retries=0)(batch_task)
    contained = ray.remote(num_cpus=1, max_retries=0)(contained_batch_task)
    settings = task_settings(config, campaign.target)
    calls = CallBudget(config.advisor.max_calls if config.advisor is not None else 0, workers * IN_FLIGHT_PER_WORKER)
    intake = run.intake(campaign, executions=next_index)
    budget = config.budget
    flying: dict[object, int] = {}  # task ref -> first index of its batch
    sizes: dict[int, int] = {}  # first index -> size of its batch
    finished: dict[int, list[dict]] = {}  # first index -> reports, until their turn comes
    turn = next_index  # the first index not yet taken in order
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
                # Each batch is a process of its own here: its strategy's counts add up with the others'.
                intake.totals.update(first, finished[first][-1])
                calls.spent(first, finished[first][-1].get("advisor"))
            while turn in finished and not stopped:
                reports = finished.pop(turn)
                turn += len(reports)
                for report in reports:
                    if intake.take_report(report["index"] + 1, report):
                        stopped = True
                        break
            if stopped:
                break
            if control.due(campaign):
                save_on_ray(control, campaign, strategy.name, intake.executions)
    finally:
        for ref in flying:
            ray.cancel(ref)
    control.finish(lambda: save_on_ray(control, campaign, strategy.name, intake.executions))
    return run.result(campaign, intake)


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


def contained_batch_task(settings_text: str, first: int, size: int) -> str:
    """The body of a Ray task that runs a batch whose worker died (see dnsse.campaign.ray_contained)."""
    from dnsse.campaign.ray_contained import run_batch_contained

    return run_batch_contained(settings_text, first, size)


def batch_task(settings_text: str, first: int, size: int, model_calls: int = 0) -> str:
    """The body of a Ray task: executions ``first .. first+size-1``, as a JSON list of reports.

    The advisor of llm and hybrid asks the model (if one is set) at most
    ``model_calls`` times. The last report carries the strategy's counts.
    """
    campaign = campaign_for(settings_text)
    strategy = strategy_for(campaign.config, model_calls=model_calls)
    monitors = list(strategy.monitors)
    for monitor in monitors:
        campaign.watch(monitor)
    reports = []
    # Tasks minimize, not the driver: minimizing runs other schedules, which may kill the process they run
    # in, and a Ray worker that dies is run again contained (see dnsse.campaign.ray_contained), unlike the driver.
    sight = FirstSight(campaign)
    try:
        with campaign.framework.activate():
            for index in range(first, first + size):
                started = time.perf_counter()
                result = campaign.execute(strategy.chooser_for(index))
                strategy.observe(result)
                reports.append(timed(sight.report(index, result), time.perf_counter() - started))
    finally:
        for monitor in monitors:
            campaign.unwatch(monitor)
        remove_spare_directories()  # the cluster may kill this worker, which removes nothing then
    strategy.close()
    if reports:
        reports[-1].update(
            arcs=arcs_of(campaign),
            semantics=semantics_of(campaign.framework),
            notes=strategy.notes(),
            engines=strategy.engine_report(),
            advisor=strategy.advisor_report(),
        )
    return json.dumps(reports)
