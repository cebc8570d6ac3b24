"""``dfs`` with ``--workers N``: worker processes explore disjoint subtrees (DESIGN §7).

The parent holds the shared part of the tree (:class:`~dnsse.search.dfs_share.DfsShare`)
and keeps every worker busy with a unit. A worker (:mod:`dnsse.campaign.local_dfs_worker`)
explores its unit for up to ``SLICE`` executions, reporting each execution
as it goes (the parent records bugs as in any parallel campaign) and the
footprint of the unit's first step as soon as it has it, then returns its
slice. When a worker is idle and no branch can be handed out, the parent
asks the busy worker with the shallowest unit (the largest subtree) to
yield: it ends its slice after the execution it is running, and its
frontier is divided anew.

Workers are those of any parallel campaign (:mod:`dnsse.campaign.worker_processes`):
spawned, each with a pipe of its own to the parent and an inbox of its own
for units, yield requests and the end. A worker that dies is replaced. Died
in an execution (a segfault, ``os._exit``, a fatal signal), that execution
is a ``crash`` bug whose trace replays it, and the worker's unit is lost
(:meth:`~dnsse.search.dfs_share.DfsShare.lose`): the search goes on with
the rest of the tree but verifies nothing. Died outside any execution, its
unit is handed out again.

Ctrl-C takes every slice back before the campaign ends, and the divided
tree is saved with the campaign, and the arcs seen (:mod:`dnsse.search.dfs_share_state`):
``--resume`` goes on with it, and verifies in the executions the
uninterrupted search needs.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from dnsse.campaign.campaign import Campaign
from dnsse.campaign.config import CampaignResult
from dnsse.campaign.executor import CampaignRun
from dnsse.campaign.intake import Intake
from dnsse.search.dfs_share import DfsShare, Unit
from dnsse.campaign.dfs_progress import division_state, resumed_division
from dnsse.search.dfs_slice import Slice
from dnsse.campaign.local_dfs_worker import YIELD, dfs_worker_main
from dnsse.campaign.local_worker import worker_settings
from dnsse.campaign.fork_server import start_fork_server
from dnsse.campaign.worker_processes import POLL_S, WorkerProcesses
from dnsse.campaign.worker_reports import worker_failure

if TYPE_CHECKING:
    from dnsse.campaign.control import CampaignControl

# Executions per unit before a worker hands its frontier back unasked.
SLICE = 64
# How long, beyond an execution's wall-clock limit, stopped workers may take to hand their slices back.
TAKE_BACK_GRACE_S = 5.0


def run_dfs(run: CampaignRun) -> CampaignResult:
    """The ``dfs`` campaign of :func:`~dnsse.campaign.run.run_campaign`, divided among ``config.workers``."""
    config, control = run.config, run.control
    campaign = run.prepared(on_loaded=start_fork_server)
    share = DfsShare(config.preemption_bound)
    done = resumed_division(control, campaign, share)
    workers = config.workers
    pool = WorkerProcesses(
        dfs_worker_main,
        lambda worker, start, files: worker_settings(config, campaign.target, worker, workers, None, start, files),
        inbox=True,
    )
    intake = run.intake(campaign, executions=done)
    division = _Division(campaign, share, pool, intake, control)
    try:
        for worker in range(workers):
            pool.start(worker, 0)
        division.run()
    finally:
        pool.shut_down()
    control.finish(division.save)
    summary = division.share.summary()
    clean = summary.exhausted and not campaign.found
    return run.result(
        campaign,
        intake,
        verified=summary.verified() if clean else None,
        unverified=summary.unverified() if clean else None,
        # How evenly the tree was divided: the most executions one worker ran.
        search={
            "workers": workers,
            "units": division.share.units,
            "busiest_worker_executions": max(division.per_worker),
            "units_lost": division.share.lost,
        },
    )


class _Division:
    """The parent's side of a divided dfs: who holds which unit, what they reported, who died."""

    def __init__(
        self,
        campaign: Campaign,
        share: DfsShare,
        pool: WorkerProcesses,
        intake: Intake,
        control: CampaignControl,
    ) -> None:
        self.campaign = campaign
        self.share = share
        self.pool = pool
        self.intake = intake
        self.control = control
        workers = campaign.config.workers
        self.per_worker = [0] * workers
        self.granted: dict[int, int] = {}  # worker -> executions it may still run in its slice
        self.units: dict[int, Unit] = {}  # worker -> its unit
        self.asked: set[int] = set()  # workers asked to yield
        self.idle = list(range(workers))
        self.returned: set[int] = set()  # idle workers whose slice just ended: they carry on deepest

    def save(self) -> None:
        """Save the campaign with its divided tree, for --resume (see dnsse.search.dfs_share_state)."""
        state = division_state(self.campaign, self.share)
        self.control.save_learnt(self.campaign, "dfs", self.intake.executions, state, {}, self.campaign.config.workers)

    def run(self) -> None:
        """Hand out units until the tree is done, the budget is spent or a bug, the clock or a signal stops it."""
        try:
            self._divide()
        finally:
            if self.control.stop_signal is not None:
                self._take_back()

    def _take_back(self) -> None:
        """Stopped by a signal: every worker ends its slice after its running execution and hands it back."""
        self.pool.stop.value = True
        until = time.perf_counter() + self.campaign.config.limits.max_seconds + TAKE_BACK_GRACE_S
        while self.units and time.perf_counter() < until:
            for worker, message in self.pool.receive(POLL_S):
                if message is None:
                    self._died(worker)
                else:
                    self._heard(worker, message)

    def _divide(self) -> None:
        while not self._stopped():
            self._hand_out()
            if self.idle and self.units and not self.share.pending():
                self._ask_to_yield()
            if not self.units:
                # Nothing in flight and nothing handed out: done or out of budget (or, were a branch
                # ever left waiting for a footprint nobody will send, stuck: stop rather than hang).
                return
            for worker, message in self.pool.receive(POLL_S):
                if message is None:
                    self._died(worker)
                else:
                    self._heard(worker, message)

    def _stopped(self) -> bool:
        # The caller stops the workers; what they still run is not counted.
        return self.control.stop_signal is not None or self.intake.stopping or self.campaign.out_of_time()

    def _heard(self, worker: int, message: dict) -> None:
        kind = message["kind"]
        if kind == "failed":
            raise worker_failure(worker, message)
        if kind == "found":
            self.intake.hold(worker, message)
        elif kind == "execution":
            self._ran(worker)
            self.intake.take_report(None, message, worker=worker)
            if self.control.due(self.campaign):
                self.save()
        elif kind == "footprint":
            self.share.footprint(self.units[worker], message["footprint"])
        elif kind == "slice":
            self.share.absorb(self.units.pop(worker), Slice.from_json(message["slice"]))
            self.granted.pop(worker, None)
            self.asked.discard(worker)
            self.idle.insert(0, worker)
            self.returned.add(worker)
        elif kind == "replace":
            # Its last execution left threads running or exhausted memory; its slice is in.
            self.pool.release(worker)
            if not self._stopped():
                self.pool.start(worker, 0)
        elif kind == "done":
            self.pool.release(worker)

    def _died(self, worker: int) -> None:
        """Worker ``worker``'s process died: its execution is a crash bug, its unit lost or given back."""
        before = self.intake.executions
        index = self.intake.died(worker, self.pool.death(worker), self.pool.files(worker), number=lambda index: None)
        self.per_worker[worker] += self.intake.executions - before
        unit = self.units.pop(worker, None)
        self.granted.pop(worker, None)
        self.asked.discard(worker)
        self.returned.discard(worker)
        if unit is not None:
            if index is None:
                self.share.give_back(unit)
            else:
                self.share.lose(unit)  # the rest of its subtree would crash again: nothing is verified
        if not self._stopped():
            self.pool.start(worker, 0)
            if worker not in self.idle:
                self.idle.append(worker)

    def _ran(self, worker: int) -> None:
        """Worker ``worker`` reported one more execution of its slice."""
        self.per_worker[worker] += 1
        if worker in self.granted:
            self.granted[worker] -= 1

    def _hand_out(self) -> None:
        """Give idle workers units while there are branches and budget left.

        A worker whose slice just ended carries on at the deepest branch, near
        where it was; the others take the shallowest, the largest subtrees.
        """
        budget = self.campaign.config.budget
        while self.idle:
            left = None if budget is None else max(0, budget - self.intake.executions - sum(self.granted.values()))
            if left == 0:
                return
            worker = self.idle[0]
            unit = self.share.take(deepest=worker in self.returned)
            if unit is None:
                return
            self.idle.pop(0)
            self.returned.discard(worker)
            size = SLICE if left is None else min(SLICE, left)
            self.units[worker], self.granted[worker] = unit, size
            self.pool.send(worker, {"prefix": unit.prefix, "executions": size})

    def _ask_to_yield(self) -> None:
        """Ask the busy worker with the shallowest unit (the largest subtree) to hand its frontier back."""
        candidates = [worker for worker in self.units if worker not in self.asked]
        if not candidates:
            return
        worker = min(candidates, key=lambda w: (self.units[w].depth, self.units[w].number))
        self.asked.add(worker)
        self.pool.send(worker, YIELD)
