"""``dfs`` with ``--workers N``: worker processes explore disjoint subtrees (DESIGN §7).

The parent holds the shared part of the tree (:class:`~dnsse.search.dfs_share.DfsShare`)
and keeps every worker busy with a unit. A worker explores its unit for up to
``SLICE`` executions, reporting each execution as it goes (the parent records
bugs as in any parallel campaign) and the footprint of the unit's first step
as soon as it has it, then returns its slice. When a worker is idle and no
branch can be handed out, the parent asks the busy worker with the shallowest
unit (the largest subtree) to yield: it ends its slice after the execution it
is running, and its frontier is divided anew.

Messages are JSON strings, as in :mod:`dnsse.search.parallel`, whose process
handling (spawn, Ctrl-C, grace period, dead workers) this reuses. Each worker
has its own inbox for units, yield requests and the final ``None``.
"""

from __future__ import annotations

import json
import multiprocessing
import time
import traceback
from multiprocessing.queues import Queue
from queue import Empty
from typing import Callable

from dnsse.coverage.arcs import ArcRecorder
from dnsse.engine.inputs import show_value
from dnsse.engine.runner import ExecutionResult
from dnsse.engine.target import LoadedTarget
from dnsse.errors import BadInput
from dnsse.frameworks.base import Framework
from dnsse.search.campaign import Campaign, CampaignConfig, CampaignResult, FoundBug
from dnsse.search.dfs_share import DfsShare, Unit
from dnsse.search.dfs_slice import Slice, SliceLimits, run_slice
from dnsse.search.parallel import (
    POLL_S,
    _check_alive,
    _settings,
    _shut_down,
    _sigint_ignored,
    _worker_failure,
    config_from_settings,
    merge_reported_arcs,
    new_arcs,
    result_from_report,
)

# Executions per unit before a worker hands its frontier back unasked.
SLICE = 64


def run_parallel_dfs(
    config: CampaignConfig,
    on_bug: Callable[[FoundBug], None] | None = None,
    on_start: Callable[[LoadedTarget, Framework], None] | None = None,
    on_execution: Callable[[int, ExecutionResult, ArcRecorder | None], None] | None = None,
) -> CampaignResult:
    """The ``dfs`` campaign of :func:`~dnsse.search.campaign.run_campaign`, divided among ``config.workers``."""
    campaign = Campaign(config, on_bug)
    with campaign.framework.activate():
        campaign.prepare()
        if on_start is not None:
            on_start(campaign.target, campaign.framework)
    workers = config.workers
    deadline = None if config.time_budget is None else time.time() + config.time_budget
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    stop = context.Event()
    inboxes = [context.Queue() for _ in range(workers)]
    processes = [
        context.Process(
            target=_work,
            args=(_settings(config, campaign.target, worker, workers, deadline), queue, inboxes[worker], stop),
            name=f"dnsse-worker-{worker}",
            daemon=True,
        )
        for worker in range(workers)
    ]
    share = DfsShare(config.preemption_bound)
    try:
        with _sigint_ignored():
            for process in processes:
                process.start()
        per_worker = [0] * workers
        executions = _coordinate(campaign, share, processes, queue, inboxes, on_execution, per_worker)
    finally:
        for inbox in inboxes:
            inbox.put(None)
        _shut_down(processes, queue, stop)
    summary = share.summary()
    clean = summary.exhausted and not campaign.found
    return campaign.result(
        "dfs",
        executions,
        verified=summary.verified() if clean else None,
        # How evenly the tree was divided: the most executions one worker ran.
        search={"workers": workers, "units": share.units, "busiest_worker_executions": max(per_worker)},
        unverified=summary.unverified() if clean else None,
    )


def _coordinate(
    campaign: Campaign,
    share: DfsShare,
    processes: list,
    queue: Queue,
    inboxes: list[Queue],
    on_execution: Callable[[int, ExecutionResult, ArcRecorder | None], None] | None,
    per_worker: list[int],
) -> int:
    """Hand out units until the tree is done, the budget is spent or a bug stops the search.

    ``per_worker`` counts each worker's executions.
    """
    config = campaign.config
    executions = 0
    granted: dict[int, int] = {}  # worker -> executions it may still run in its slice
    units: dict[int, Unit] = {}  # worker -> its unit
    asked: set[int] = set()  # workers asked to yield
    idle = list(range(len(processes)))
    returned: set[int] = set()  # idle workers whose slice just ended: they carry on deepest
    running = set(range(len(processes)))
    dead_since: dict[int, float] = {}
    while True:
        if campaign.out_of_time() or (campaign.found and not config.keep_going):
            return executions  # the caller stops the workers; what they still run is not counted
        _hand_out(share, idle, returned, units, granted, inboxes, config.budget, executions)
        if idle and units and not share.pending():
            _ask_to_yield(units, asked, inboxes)
        if not units:
            # Nothing in flight and nothing handed out: done or out of budget (or, were a branch
            # ever left waiting for a footprint nobody will send, stuck: stop rather than hang).
            return executions
        try:
            message = json.loads(queue.get(timeout=POLL_S))
        except Empty:
            _check_alive(processes, running, dead_since)
            continue
        kind, worker = message["kind"], message["worker"]
        if kind == "failed":
            raise _worker_failure(worker, message)
        if kind == "execution":
            executions += 1
            per_worker[worker] += 1
            granted[worker] -= 1
            result = result_from_report(message)
            merge_reported_arcs(campaign.recorder, message["arcs"])
            adopt = getattr(campaign.framework, "adopt_semantics", None)
            if adopt is not None:
                adopt(message["semantics"])  # the backend semantics the workers' runs chose
            if on_execution is not None:
                on_execution(executions, result, campaign.recorder)
            if result.inconclusive is not None:
                campaign.record(result, executions)
                if not config.keep_going:
                    return executions  # like a bug: the next executions would likely hang too
            elif result.bug is not None and (config.keep_going or not campaign.found):
                with campaign.framework.activate():
                    campaign.record(result, executions)
        elif kind == "footprint":
            share.footprint(units[worker], message["footprint"])
        elif kind == "slice":
            share.absorb(units.pop(worker), Slice.from_json(message["slice"]))
            granted.pop(worker, None)
            asked.discard(worker)
            idle.insert(0, worker)
            returned.add(worker)


def _hand_out(
    share: DfsShare,
    idle: list[int],
    returned: set[int],
    units: dict[int, Unit],
    granted: dict[int, int],
    inboxes: list[Queue],
    budget: int | None,
    executions: int,
) -> None:
    """Give idle workers units while there are branches and budget left.

    A worker whose slice just ended carries on at the deepest branch, near
    where it was; the others take the shallowest, the largest subtrees.
    """
    while idle:
        left = _budget_left(budget, executions, granted)
        if left == 0:
            return
        worker = idle[0]
        unit = share.take(deepest=worker in returned)
        if unit is None:
            return
        idle.pop(0)
        returned.discard(worker)
        size = SLICE if left is None else min(SLICE, left)
        units[worker], granted[worker] = unit, size
        inboxes[worker].put(json.dumps({"prefix": unit.prefix, "executions": size}))


def _budget_left(budget: int | None, executions: int, granted: dict[int, int]) -> int | None:
    if budget is None:
        return None
    return max(0, budget - executions - sum(granted.values()))


def _ask_to_yield(units: dict[int, Unit], asked: set[int], inboxes: list[Queue]) -> None:
    """Ask the busy worker with the shallowest unit (the largest subtree) to hand its frontier back."""
    candidates = [worker for worker in units if worker not in asked]
    if not candidates:
        return
    worker = min(candidates, key=lambda w: (units[w].depth, units[w].number))
    asked.add(worker)
    inboxes[worker].put(json.dumps("yield"))


def _work(settings_text: str, queue: Queue, inbox: Queue, stop) -> None:  # noqa: ANN001 - a multiprocessing Event
    """The body of a worker process: explore the units the parent sends until it sends ``None``."""
    settings = json.loads(settings_text)
    worker = settings["worker"]

    def send(kind: str, **fields: object) -> None:
        queue.put(json.dumps({"kind": kind, "worker": worker, **fields}))

    send("started")
    try:
        _explore(settings, queue, inbox, stop, send)
    except BadInput as error:
        send("failed", bad_input=True, error=str(error))
    except Exception as error:  # noqa: BLE001 - any crash must reach the parent as a message, not a hang
        send("failed", bad_input=False, error=f"{type(error).__name__}: {error}", traceback=traceback.format_exc())
    else:
        send("done")


def _explore(settings: dict, queue: Queue, inbox: Queue, stop, send: Callable[..., None]) -> None:  # noqa: ANN001
    config = config_from_settings(settings)
    campaign = Campaign(config)
    parent = multiprocessing.parent_process()
    reported: dict = {}
    with campaign.framework.activate():
        campaign.prepare()
        while True:
            try:
                message = json.loads(inbox.get(timeout=POLL_S))
            except Empty:
                if stop.is_set() or (parent is not None and not parent.is_alive()):
                    return
                continue
            if message is None:
                return
            if message == "yield":
                continue  # asked after its slice had ended: nothing to hand back
            yielded = []

            def should_yield() -> bool:
                if stop.is_set():
                    return True
                try:
                    while True:
                        if json.loads(inbox.get_nowait()) == "yield":
                            yielded.append(True)
                except Empty:
                    pass
                return bool(yielded)

            def execute(search, number: int) -> ExecutionResult:  # noqa: ANN001 - the slice's DfsStrategy
                result = campaign.execute(search.chooser_for(number))
                send(
                    "execution",
                    bug=result.bug.to_json() if result.bug is not None else None,
                    choices=[choice.to_json() for choice in result.choices],
                    inputs={name: show_value(value) for name, value in result.inputs.items()},
                    steps=result.steps,
                    elapsed_s=result.elapsed_s,
                    divergence=result.divergence,
                    inconclusive=result.inconclusive.to_json() if result.inconclusive is not None else None,
                    arcs=new_arcs(campaign.recorder, reported),
                    semantics=getattr(campaign.framework, "semantics", None),
                )
                return result

            done = run_slice(
                config.preemption_bound,
                message["prefix"],
                SliceLimits(message["executions"], should_yield),
                execute,
                on_first=lambda footprint: send("footprint", footprint=footprint),
            )
            send("slice", slice=done.to_json())
