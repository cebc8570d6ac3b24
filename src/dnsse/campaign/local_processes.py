"""Parallel campaigns: executions in worker processes on this machine (DESIGN §7).

Worker ``w`` of ``N`` runs the execution indices ``w, w+N, w+2N, ...`` (from
0), each with the strategy's chooser for that index and the campaign seed,
so an index names the same execution whichever worker runs it. Workers stop
at the budget, at the time budget, or when the parent sets the stop event,
and report every execution to the parent as one JSON string on their own
pipe: plain data, so nothing of ours is pickled and traces stay JSON.

The parent owns the findings. It deduplicates bugs, minimizes each new one
itself (it has the target loaded and the framework at hand), writes the
trace, announces it, and, unless ``keep_going``, sets the stop event after
the first bug. With ``coverage``, each report carries the arcs that are new
in its worker, and the parent merges them into one recorder.

A worker that dies (a segfault, ``os._exit``, a fatal signal, the
out-of-memory killer) is no failure of the campaign: the execution it died
in is a ``crash`` bug with a trace that replays it, from the worker's flight
recorder, and a fresh worker takes over its share after that execution (see
:mod:`dnsse.campaign.worker_pool`). Workers are forked from a server that has
imported what they need (:mod:`dnsse.campaign.fork_server`). Ctrl-C reaches the parent only; the parent
stops its workers, waits a grace period, then terminates those still running.

What a worker process runs is :mod:`dnsse.campaign.local_worker`; its
reports are :mod:`dnsse.campaign.worker_reports`.

Strategies learn per worker: ``pct`` estimates the length of a run from the
executions of its own worker. A trace records its choices, so it replays
whatever the worker had learnt. ``dfs`` divides its tree among the workers
instead (:mod:`dnsse.campaign.local_dfs`): each of its executions follows
from the ones before.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from dnsse.coverage.arcs import ArcRecorder
from dnsse.engine.runner import ExecutionResult
from dnsse.engine.target import LoadedTarget
from dnsse.errors import BadInput
from dnsse.frameworks.base import Framework
from dnsse.campaign.campaign import (
    Campaign,
    CampaignConfig,
    CampaignResult,
    FoundBug,
    prepared_campaign,
)
from dnsse.campaign.local_progress import ParallelProgress, resume_progress, save_progress
from dnsse.campaign.local_rounds import RoundKeeper
from dnsse.campaign.local_worker import worker_main, worker_settings
from dnsse.search.strategy import Division, Strategy
from dnsse.campaign.worker_death import MAX_DEATHS_WITHOUT_PROGRESS, death_message
from dnsse.campaign.fork_server import start_fork_server
from dnsse.campaign.worker_pool import POLL_S, WorkerPool
from dnsse.campaign.worker_reports import merge_reported_arcs, result_from_report, worker_failure
from dnsse.campaign.worker_totals import WorkerTotals

if TYPE_CHECKING:
    from dnsse.campaign.control import CampaignControl


def run_parallel(
    config: CampaignConfig,
    strategy: Strategy,
    on_bug: Callable[[FoundBug], None] | None = None,
    on_start: Callable[[LoadedTarget, Framework], None] | None = None,
    on_execution: Callable[[int, ExecutionResult, ArcRecorder | None], None] | None = None,
    control: CampaignControl | None = None,
) -> CampaignResult:
    """The campaign of :func:`~dnsse.campaign.campaign.run_campaign`, run by ``config.workers`` processes.

    Execution numbers (``on_execution``, each bug's ``execution``) are the
    global index + 1, as in a sequential campaign; ``executions`` counts the
    reports the parent received and the executions workers died in. A
    script that calls this needs the ``if __name__ == "__main__":`` guard
    that spawned processes ask for. ``control``'s stop signal stops the workers.
    """
    if strategy.division in (Division.TREE, Division.ONE_PROCESS):
        if strategy.division is Division.ONE_PROCESS:
            raise BadInput(
                f"the {strategy.name} search runs in one process: --workers divides only the dfs search among "
                f"processes; leave --workers out for {strategy.name}"
            )
        # Imported here because the divided search is built on this module.
        from dnsse.campaign.local_dfs import run_parallel_dfs

        return run_parallel_dfs(config, on_bug, on_start, on_execution, control)
    campaign = prepared_campaign(config, on_bug, on_start, feedback=strategy.wants_feedback, on_loaded=start_fork_server)
    workers = config.workers if config.budget is None else min(config.workers, config.budget)
    done, progress = resume_progress(control, campaign, config.strategy, workers)
    saving = control is not None and control.saving
    # Workers compare the time budget with the wall clock, the one clock every process shares.
    deadline = (
        None
        if config.time_budget is None
        else time.time() + config.time_budget - (time.perf_counter() - campaign.started)
    )
    pool = WorkerPool(
        worker_main,
        lambda worker, start, files: worker_settings(
            config, campaign.target, worker, workers, deadline, start, files, progress.take_learnt(worker), saving,
            first_round,
        ),
    )
    rounds = _round_keeper(strategy, pool.directory, workers, progress, control) if strategy.division is Division.ROUNDS else None
    # The merges written here start after those a resumed campaign's workers had applied.
    first_round = rounds.merged if rounds is not None else 0
    totals = WorkerTotals()
    running = {worker for worker in range(workers) if _share_left(config.budget, progress.next[worker], deadline)}
    executions = done
    try:
        for worker in sorted(running):
            _start(pool, rounds, worker, progress.next[worker])
        executions = _collect(
            campaign, pool, workers, deadline, on_execution, totals, rounds, control, progress, running, done
        )
    finally:
        pool.shut_down()
    if control is not None:
        if rounds is not None:
            progress.rounds = rounds.state()
        control.finish(lambda: save_progress(control, campaign, config.strategy, executions, progress))
    search = {**totals.notes(), **(rounds.notes() if rounds is not None else {})}
    result = campaign.result(strategy.name, executions, engines=totals.engines(), search=search)
    result.interrupted = control.stop_signal if control is not None else None
    result.advisor = totals.advisor()
    return result


def _round_keeper(
    strategy: Strategy, directory: Path, workers: int, progress: ParallelProgress, control: CampaignControl | None
) -> RoundKeeper:
    """The rounds of a directed search, merged on from where a resumed campaign stopped."""
    if progress.rounds is None:
        return RoundKeeper(directory, workers)
    assert control is not None
    try:
        return RoundKeeper.restored(directory, workers, progress.rounds)
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise control.damaged(strategy.name, error) from None


def _start(pool: WorkerPool, rounds: RoundKeeper | None, worker: int, start: int) -> None:
    if rounds is not None:
        rounds.started(worker, start)
    pool.start(worker, start)


def _collect(
    campaign: Campaign,
    pool: WorkerPool,
    workers: int,
    deadline: float | None,
    on_execution: Callable[[int, ExecutionResult, ArcRecorder | None], None] | None,
    totals: WorkerTotals,
    rounds: RoundKeeper | None,
    control: CampaignControl | None,
    progress: ParallelProgress,
    running: set[int],
    executions: int,
) -> int:
    """Receive reports until every ``running`` worker is done; the executions, ``executions`` before.

    ``totals`` gets each worker process's latest strategy counts (over its
    executions so far), ``progress`` the next index of each worker and what
    each learnt when stopped. A worker that dies is replaced after the execution
    it died in, which is recorded as a ``crash`` bug. ``rounds`` (a directed
    search) merges what the workers learnt, round by round.
    """
    config = campaign.config
    fruitless = {worker: 0 for worker in running}  # deaths in a row with no execution in between
    found: dict[int, dict] = {}  # a bug each worker found and is minimizing, as found
    source = campaign.target.spec.path.name
    while running:
        if control is not None and control.stop_signal is not None:
            if rounds is not None and control.saving:
                rounds.stop(running)  # at a round's start, where the workers' states fit together
            else:
                pool.stop.value = True
        for worker, message in pool.receive(POLL_S):
            if message is None:
                death = pool.death(worker)
                index = death.index
                unshrunk = found.pop(worker, None)
                if unshrunk is not None:
                    # It died minimizing a bug: the bug as found stands (its run did not kill the worker).
                    executions += 1
                    _record(campaign, pool, unshrunk["index"], result_from_report(unshrunk), on_execution)
                if index is None:
                    fruitless[worker] += 1
                    if fruitless[worker] >= MAX_DEATHS_WITHOUT_PROGRESS:
                        raise BadInput(death_message(death))
                    following = progress.next[worker]
                else:
                    fruitless[worker] = 0
                    executions += unshrunk is None or unshrunk["index"] != index
                    result = death.crash(pool.files(worker), source)
                    result.inputs = dict(campaign.pinned)
                    _record(campaign, pool, index, result, on_execution, rerunnable=False)
                    progress.next[worker] = following = index + workers
                if _share_left(config.budget, following, deadline) and not pool.stop.value:
                    _start(pool, rounds, worker, following)
                else:
                    running.discard(worker)
                if rounds is not None:
                    rounds.settle(running)
                continue
            kind = message["kind"]
            if kind == "done":
                pool.release(worker)
                running.discard(worker)
            elif kind == "replace":
                pool.release(worker)
                following = message["index"] + workers
                if _share_left(config.budget, following, deadline) and not pool.stop.value:
                    _start(pool, rounds, worker, following)
                else:
                    running.discard(worker)
            elif kind == "learnt" and rounds is not None:
                rounds.learnt(worker, message["round"], message["learnt"])
            elif kind == "failed":
                raise worker_failure(worker, message)
            elif kind == "found":
                found[worker] = message
            elif kind == "learnt":
                progress.learnt[worker] = message["learnt"]
            elif kind == "boundary":
                progress.learnt[worker] = message["learnt"]
                progress.next[worker] = message["next"]
            elif kind == "execution":
                executions += 1
                found.pop(worker, None)
                fruitless[worker] = 0
                progress.next[worker] = message["index"] + workers
                totals.update(message["process"], message)
                merge_reported_arcs(campaign.recorder, message["arcs"])
                adopt = getattr(campaign.framework, "adopt_semantics", None)
                if adopt is not None:
                    adopt(message["semantics"])
                _record(campaign, pool, message["index"], result_from_report(message), on_execution)
                if rounds is None and control is not None and control.due(campaign):
                    save_progress(control, campaign, config.strategy, executions, progress)
            if rounds is not None and kind in ("done", "replace", "learnt"):
                rounds.settle(running)
    return executions


def _record(
    campaign: Campaign,
    pool: WorkerPool,
    index: int,
    result: ExecutionResult,
    on_execution: Callable[[int, ExecutionResult, ArcRecorder | None], None] | None,
    rerunnable: bool = True,
) -> None:
    """One execution a worker ran (or died in): seen, and its bug recorded when it counts."""
    number = index + 1
    if on_execution is not None:
        on_execution(number, result, campaign.recorder)
    keep_going = campaign.config.keep_going
    if result.inconclusive is not None:
        campaign.record(result, number)
        if not keep_going:
            pool.stop.value = True  # like a bug: the next executions would likely hang too
    elif result.rejected is not None:
        campaign.record(result, number)  # counted, never a bug
    # Without keep_going only the first bug counts; workers may report more before they stop.
    elif result.bug is not None and (keep_going or not campaign.found):
        if not keep_going:
            pool.stop.value = True  # first, so that workers wind down while the parent confirms
        with campaign.framework.activate():
            # Workers minimize the bugs they find: the parent replays only runs that did not kill a worker.
            campaign.record(result, number, shrink=False, rerunnable=rerunnable)


def _share_left(budget: int | None, index: int, deadline: float | None) -> bool:
    """Whether a worker starting at ``index`` would have executions to run."""
    return (budget is None or index < budget) and (deadline is None or time.time() < deadline)
