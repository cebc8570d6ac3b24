"""Parallel campaigns: executions in worker processes on this machine (DESIGN §7).

Worker ``w`` of ``N`` runs the execution indices ``w, w+N, w+2N, ...`` (from
0), each with the strategy's chooser for that index and the campaign seed,
so an index names the same execution whichever worker runs it. Workers stop
at the budget, at the time budget, or when the parent sets the stop event,
and report every execution to the parent as one JSON string on their own
pipe: plain data, so nothing of ours is pickled and traces stay JSON.

The parent owns the findings (:mod:`dnsse.campaign.intake`). Each worker
minimizes the bugs it finds (minimizing may kill it, and it is replaced);
the parent deduplicates them, writes the trace, confirms and announces it,
and, unless ``keep_going``, sets the stop event after the first bug. With ``coverage``, each report carries the arcs that are new
in its worker, and the parent merges them into one recorder.

A worker that dies (a segfault, ``os._exit``, a fatal signal, the
out-of-memory killer) is no failure of the campaign: the execution it died
in is a ``crash`` bug with a trace that replays it, from the worker's flight
recorder, and a fresh worker takes over its share after that execution (see
:mod:`dnsse.campaign.worker_processes`). Workers are forked from a server that has
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

from dnsse.campaign.campaign import Campaign
from dnsse.campaign.config import CampaignResult
from dnsse.campaign.control import CampaignControl
from dnsse.campaign.executor import CampaignRun
from dnsse.campaign.fork_server import start_fork_server
from dnsse.campaign.intake import Intake
from dnsse.campaign.local_progress import ParallelProgress, resume_progress, save_progress
from dnsse.campaign.local_rounds import RoundKeeper
from dnsse.campaign.local_worker import worker_main, worker_settings
from dnsse.campaign.worker_processes import POLL_S, WorkerProcesses
from dnsse.campaign.worker_reports import worker_failure
from dnsse.search.strategy import Division, Strategy


class LocalProcesses:
    """Executions in ``config.workers`` worker processes on this machine (see the module)."""

    option = "--workers"
    divides = True

    def independent(self, run: CampaignRun) -> CampaignResult:
        return _run_striped(run)

    def rounds(self, run: CampaignRun) -> CampaignResult:
        return _run_striped(run)

    def tree(self, run: CampaignRun) -> CampaignResult:
        # Imported here: the divided tree is a search of its own, not needed by the others.
        from dnsse.campaign.local_dfs import run_dfs

        return run_dfs(run)


def _run_striped(run: CampaignRun) -> CampaignResult:
    """Worker ``w`` of ``N`` runs the indices ``w, w+N, ...``; a directed search merges what they learnt in rounds.

    Execution numbers (``on_execution``, each bug's ``execution``) are the
    global index + 1, as in a sequential campaign; the executions counted
    are the reports received and the executions workers died in. A script
    that calls this needs the ``if __name__ == "__main__":`` guard that
    spawned processes ask for. ``control``'s stop signal stops the workers.
    """
    config, strategy, control = run.config, run.strategy, run.control
    campaign = run.prepared(on_loaded=start_fork_server)
    workers = config.workers if config.budget is None else min(config.workers, config.budget)
    done, progress = resume_progress(control, campaign, config.strategy, workers)
    # Workers compare the time budget with the wall clock, the one clock every process shares.
    deadline = (
        None
        if config.time_budget is None
        else time.time() + config.time_budget - (time.perf_counter() - campaign.started)
    )
    pool = WorkerProcesses(
        worker_main,
        lambda worker, start, files: worker_settings(
            config, campaign.target, worker, workers, deadline, start, files, progress.take_learnt(worker),
            control.saving, first_round,
        ),
    )
    rounds = (
        _round_keeper(strategy, pool.directory, workers, progress, control)
        if strategy.division is Division.ROUNDS
        else None
    )
    # The merges written here start after those a resumed campaign's workers had applied.
    first_round = rounds.merged if rounds is not None else 0
    intake = run.intake(campaign, stop=lambda: setattr(pool.stop, "value", True), executions=done)
    running = {worker for worker in range(workers) if _share_left(config.budget, progress.next[worker], deadline)}
    try:
        for worker in sorted(running):
            _start(pool, rounds, worker, progress.next[worker])
        _collect(campaign, pool, workers, deadline, intake, rounds, control, progress, running)
    finally:
        pool.shut_down()
    if rounds is not None:
        progress.rounds = rounds.state()
    control.finish(lambda: save_progress(control, campaign, config.strategy, intake.executions, progress))
    return run.result(campaign, intake, search=rounds.notes() if rounds is not None else None)


def _round_keeper(
    strategy: Strategy, directory: Path, workers: int, progress: ParallelProgress, control: CampaignControl
) -> RoundKeeper:
    """The rounds of a directed search, merged on from where a resumed campaign stopped."""
    if progress.rounds is None:
        return RoundKeeper(directory, workers)
    try:
        return RoundKeeper.restored(directory, workers, progress.rounds)
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise control.damaged(strategy.name, error) from None


def _start(pool: WorkerProcesses, rounds: RoundKeeper | None, worker: int, start: int) -> None:
    if rounds is not None:
        rounds.started(worker, start)
    pool.start(worker, start)


def _collect(
    campaign: Campaign,
    pool: WorkerProcesses,
    workers: int,
    deadline: float | None,
    intake: Intake,
    rounds: RoundKeeper | None,
    control: CampaignControl,
    progress: ParallelProgress,
    running: set[int],
) -> None:
    """Receive reports until every ``running`` worker is done.

    ``progress`` gets the next index of each worker and what each learnt
    when stopped. A worker that dies is replaced after the execution it
    died in, which is recorded as a ``crash`` bug. ``rounds`` (a directed
    search) merges what the workers learnt, round by round.
    """
    config = campaign.config
    while running:
        if control.stop_signal is not None:
            if rounds is not None and control.saving:
                rounds.stop(running)  # at a round's start, where the workers' states fit together
            else:
                pool.stop.value = True
        for worker, message in pool.receive(POLL_S):
            if message is None:
                index = intake.died(worker, pool.death(worker), pool.files(worker), number=lambda index: index + 1)
                if index is not None:
                    progress.next[worker] = index + workers
                following = progress.next[worker]
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
                intake.hold(worker, message)
            elif kind == "learnt":
                progress.learnt[worker] = message["learnt"]
            elif kind == "boundary":
                progress.learnt[worker] = message["learnt"]
                progress.next[worker] = message["next"]
            elif kind == "execution":
                progress.next[worker] = message["index"] + workers
                intake.take_report(message["index"] + 1, message, worker=worker, process=message["process"])
                if rounds is None and control.due(campaign):
                    save_progress(control, campaign, config.strategy, intake.executions, progress)
            if rounds is not None and kind in ("done", "replace", "learnt"):
                rounds.settle(running)


def _share_left(budget: int | None, index: int, deadline: float | None) -> bool:
    """Whether a worker starting at ``index`` would have executions to run."""
    return (budget is None or index < budget) and (deadline is None or time.time() < deadline)
