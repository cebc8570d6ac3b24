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
:mod:`dnsse.search.worker_pool`). A spawned worker imports torch anew, so it
takes a few seconds to start. Ctrl-C reaches the parent only; the parent
stops its workers, waits a grace period, then terminates those still running.

Strategies learn per worker: ``pct`` estimates the length of a run from the
executions of its own worker. A trace records its choices, so it replays
whatever the worker had learnt. ``dfs`` divides its tree among the workers
instead (:mod:`dnsse.search.parallel_dfs`): each of its executions follows
from the ones before.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import faulthandler
import itertools
import json
import multiprocessing
import os
import signal
import sys
import time
import traceback
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from dnsse.coverage.arcs import Arc, ArcRecorder
from dnsse.engine.bugs import Bug
from dnsse.engine.inconclusive import Inconclusive
from dnsse.engine.choices import Choice
from dnsse.engine.execution import Limits
from dnsse.engine.flight import FlightRecorder, recorder_capacity
from dnsse.engine.memory import is_exhausted
from dnsse.engine.runner import ExecutionResult
from dnsse.engine.target import LoadedTarget
from dnsse.errors import BadInput
from dnsse.frameworks.base import Framework
from dnsse.engine.inputs import show_value
from dnsse.advisor.model import model_settings_from_json, model_settings_json
from dnsse.search.campaign import (
    Campaign,
    CampaignConfig,
    CampaignResult,
    FoundBug,
    advisor_report,
    advisor_setup,
    engine_report,
    prepared_campaign,
    wants_feedback,
    watch_for,
)
from dnsse.search.parallel_progress import (
    ParallelProgress,
    learnt_of,
    restore_learnt,
    resume_progress,
    save_progress,
)
from dnsse.search.registry import make_strategy
from dnsse.search.strategy import Strategy, notes_of
from dnsse.search.worker_death import MAX_DEATHS_WITHOUT_PROGRESS, WorkerFiles, death_message
from dnsse.search.worker_pool import WorkerPool, start_fork_server
from dnsse.search.worker_totals import WorkerTotals
from dnsse.search.corpus_share import Sharing, round_of, sharded
from dnsse.search.parallel_rounds import RoundKeeper, RoundWorker

if TYPE_CHECKING:
    from dnsse.search.control import CampaignControl

# How often the parent looks at its workers while no report arrives.
POLL_S = 0.2

Send = Callable[..., None]


def run_parallel(
    config: CampaignConfig,
    strategy: Strategy,
    on_bug: Callable[[FoundBug], None] | None = None,
    on_start: Callable[[LoadedTarget, Framework], None] | None = None,
    on_execution: Callable[[int, ExecutionResult, ArcRecorder | None], None] | None = None,
    control: CampaignControl | None = None,
) -> CampaignResult:
    """The campaign of :func:`~dnsse.search.campaign.run_campaign`, run by ``config.workers`` processes.

    Execution numbers (``on_execution``, each bug's ``execution``) are the
    global index + 1, as in a sequential campaign; ``executions`` counts the
    reports the parent received and the executions workers died in. A
    script that calls this needs the ``if __name__ == "__main__":`` guard
    that spawned processes ask for. ``control``'s stop signal stops the workers.
    """
    if hasattr(strategy, "exhausted"):
        # Imported here because the divided search is built on this module.
        from dnsse.search.parallel_dfs import run_parallel_dfs

        return run_parallel_dfs(config, on_bug, on_start, on_execution, control)
    campaign = prepared_campaign(config, on_bug, on_start, feedback=wants_feedback(strategy), on_loaded=start_fork_server)
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
        _worker_main,
        lambda worker, start, files: worker_settings(
            config, campaign.target, worker, workers, deadline, start, files, progress.take_learnt(worker), saving,
            first_round,
        ),
    )
    rounds = _round_keeper(strategy, pool.directory, workers, progress, control) if sharded(strategy) else None
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


def worker_settings(
    config: CampaignConfig,
    target: LoadedTarget,
    worker: int,
    workers: int,
    deadline: float | None,
    start: int | None = None,
    files: WorkerFiles | None = None,
    learnt: dict | None = None,
    saving: bool = False,
    applied: int = 0,
) -> str:
    """What a worker needs to rebuild the campaign, as JSON (paths made absolute).

    ``learnt``: what the worker learnt before the campaign was stopped (see
    dnsse.search.parallel_progress); ``saving``: send what it learnt when stopped;
    ``applied``: a directed search's rounds merged before it starts, which ``learnt`` holds.
    """
    return json.dumps(
        {
            "worker": worker,
            "workers": workers,
            "start": worker if start is None else start,
            "deadline": deadline,
            "flight": str(files.flight) if files is not None else None,
            "rounds": str(files.flight.parent) if files is not None else None,
            "faults_file": str(files.faults) if files is not None else None,
            "target": str(target.spec),
            "framework": target.framework,
            "world_size": config.world_size,
            "strategy": config.strategy,
            "seed": config.seed,
            "pct_depth": config.pct_depth,
            "preemption_bound": config.preemption_bound,
            "budget": config.budget,
            "limits": dataclasses.asdict(config.limits),
            "coverage": config.coverage,
            "inputs": config.inputs,
            "specs": list(config.specs),
            "spec_files": [str(Path(path).resolve()) for path in config.spec_files],
            "faults": config.faults,
            "show_output": config.show_output,
            "minimize": config.minimize,
            "advisor": model_settings_json(config.advisor),
            "learnt": learnt,
            "saving": saving,
            "applied": applied,
        }
    )


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


def result_from_report(message: dict) -> ExecutionResult:
    """An execution a worker reported as JSON (here, or a Ray worker), as the campaign records it."""
    return ExecutionResult(
        bug=Bug.from_json(message["bug"]) if message["bug"] is not None else None,
        choices=[Choice.from_json(choice) for choice in message["choices"]],
        inputs=message["inputs"],
        steps=message["steps"],
        elapsed_s=message["elapsed_s"],
        divergence=message["divergence"],
        inconclusive=Inconclusive.from_json(message["inconclusive"]) if message.get("inconclusive") else None,
    )


def merge_reported_arcs(recorder: ArcRecorder | None, arcs: dict[str, list[list[int]]]) -> None:
    if recorder is None:
        return
    for path, pairs in arcs.items():
        recorder.arcs.setdefault(path, set()).update((start, end) for start, end in pairs)


def worker_failure(worker: int, message: dict) -> BadInput:
    if message["bad_input"]:
        return BadInput(message["error"])
    failure = BadInput(
        f"worker process {worker} failed with {message['error']}. "
        "Run the same command with --workers 1 --debug to see the error in one process"
    )
    # --debug prints notes with the traceback: there the worker's own traceback shows.
    failure.add_note(f"traceback in worker {worker}:\n{message['traceback']}")
    return failure


def _worker_main(settings_text: str, pipe: Connection, stop: ctypes.c_bool) -> None:
    """A worker process of a parallel campaign: its share of the executions, then its exit."""
    _work(settings_text, pipe, stop)
    exit_worker(pipe)


def _work(settings_text: str, pipe: Connection, stop: ctypes.c_bool) -> None:
    serve(settings_text, pipe, lambda settings, send: _run_share(settings, stop, send))


def serve(settings_text: str, pipe: Connection, run: Callable[[dict, Send], dict | None]) -> None:
    """The body of a worker process: ``run(settings, send)``, its end told to the parent.

    ``run`` returns ``None`` when its work is done, or the fields of a
    ``replace`` message when a fresh process should go on. Its failure
    reaches the parent as a ``failed`` message, and a fatal signal leaves
    the program's Python stacks in the worker's fault log for the parent's
    crash report.
    """
    # Ctrl-C at a terminal reaches every process of its group, and the mask the pool started this
    # process with does not survive its start: the parent stops the workers, after their execution.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    settings = json.loads(settings_text)
    worker = settings["worker"]

    def send(kind: str, **fields: object) -> None:
        pipe.send_bytes(json.dumps({"kind": kind, "worker": worker, **fields}).encode())

    fault_log = open(settings["faults_file"], "w") if settings["faults_file"] else None  # noqa: SIM115
    if fault_log is not None:
        faulthandler.enable(file=fault_log, all_threads=True)
    try:
        replace = run(settings, send)
    except BadInput as error:
        send("failed", bad_input=True, error=str(error))
    except Exception as error:  # noqa: BLE001 - any crash must reach the parent as a message, not a hang
        send(
            "failed", bad_input=False, error=f"{type(error).__name__}: {error}", traceback=traceback.format_exc()
        )
    else:
        if replace is None:
            send("done")
        else:
            send("replace", **replace)


def exit_worker(pipe: Connection) -> None:
    """End a worker process with an exit no thread of the program can hold up (see dnsse.cli.exit_now)."""
    pipe.close()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


def _run_share(settings: dict, stop: ctypes.c_bool, send: Send) -> dict | None:
    """Run and report executions; the index after which a fresh process should go on, if one should."""
    worker, workers, deadline = settings["worker"], settings["workers"], settings["deadline"]
    config = config_from_settings(settings)
    strategy = make_strategy(
        config.strategy, config.seed, config.pct_depth, advisor=advisor_setup(config, worker, workers)
    )
    campaign = Campaign(config, feedback=wants_feedback(strategy))
    watch_for(campaign, strategy)
    recorder = None
    if settings["flight"] is not None:
        recorder = FlightRecorder(Path(settings["flight"]), recorder_capacity(config.limits.max_steps))
        campaign.watch(recorder)
        campaign.flight = recorder
    parent = multiprocessing.parent_process()
    reported: dict[str, set[Arc]] = {}
    shrunk: set[tuple[str, str]] = set()
    sharing = Sharing.of(strategy, campaign.coverage_map, worker, workers) if settings["rounds"] else None
    rounds = RoundWorker(Path(settings["rounds"]), sharing, settings["applied"]) if sharing is not None else None
    if rounds is not None:
        rounds.catch_up()
    last_round = None
    with campaign.framework.activate():
        campaign.prepare()
        if settings["learnt"] is not None:
            restore_learnt(strategy, campaign, settings["learnt"])
            if sharing is not None:
                sharing.settled()
        for index in itertools.count(settings["start"], workers):
            if config.budget is not None and index >= config.budget:
                break
            if stop.value or (deadline is not None and time.time() >= deadline):
                break
            if parent is not None and not parent.is_alive():
                break  # nobody left to report to
            if rounds is not None:
                number = round_of(index, workers)
                if last_round is not None and number > last_round:
                    send("learnt", round=last_round, learnt=rounds.sharing.learnt())
                    if not rounds.wait_for(last_round, stop):
                        break
                if number != last_round and rounds.stops_at(number):
                    # Stopped at this round's start, every merge before it applied: what it learnt, for --resume.
                    send("boundary", next=index, learnt=learnt_of(strategy, campaign))
                    break
                last_round = number
            chooser = strategy.chooser_for(index)
            if recorder is not None:
                recorder.begin(index + 1)
                chooser = recorder.wrap(chooser)
            try:
                result = campaign.execute(chooser)
            finally:
                if recorder is not None:
                    recorder.end()
            strategy.observe(result)
            shown = result
            if result.bug is not None and result.bug.signature() not in shrunk and not is_exhausted(result.bug):
                # Minimizing tries other schedules and values, which may kill this process:
                # the parent holds the bug as found until the minimized one arrives.
                shrunk.add(result.bug.signature())
                send("found", **execution_report(index, result))
                shown = campaign.minimized(result, index + 1)
            send(
                "execution",
                **execution_report(index, shown),
                arcs=new_arcs(campaign.recorder, reported),
                process=os.getpid(),
                notes=notes_of(strategy),
                engines=engine_report(strategy),
                advisor=advisor_report(strategy),
                semantics=getattr(campaign.framework, "semantics", None),
            )
            if result.abandoned or is_exhausted(result.bug):
                # Threads that would not stop slow every later execution, and the allocator may keep
                # the memory the program took: a fresh process goes on.
                return {"index": index}
        if stop.value and settings["saving"] and rounds is None:
            # Stopped before its share was done: what it learnt goes into the saved state, for --resume.
            send("learnt", learnt=learnt_of(strategy, campaign))
    return None


def execution_report(index: int, result: ExecutionResult) -> dict:
    """An execution's outcome as JSON; :func:`result_from_report` reads it back."""
    return {
        "index": index,
        "bug": result.bug.to_json() if result.bug is not None else None,
        "choices": [choice.to_json() for choice in result.choices],
        "inputs": {name: show_value(value) for name, value in result.inputs.items()},
        "steps": result.steps,
        "elapsed_s": result.elapsed_s,
        "divergence": result.divergence,
        "inconclusive": result.inconclusive.to_json() if result.inconclusive is not None else None,
    }


def config_from_settings(settings: dict) -> CampaignConfig:
    """The campaign a worker runs, from the parent's JSON settings."""
    return CampaignConfig(
        target=settings["target"],
        framework=settings["framework"],
        world_size=settings["world_size"],
        strategy=settings["strategy"],
        budget=settings["budget"],
        seed=settings["seed"],
        limits=Limits(**settings["limits"]),
        pct_depth=settings["pct_depth"],
        preemption_bound=settings["preemption_bound"],
        coverage=settings["coverage"],
        specs=settings["specs"],
        spec_files=[Path(path) for path in settings["spec_files"]],
        faults=settings["faults"],
        show_output=settings["show_output"],
        minimize=settings["minimize"],
        inputs=settings["inputs"],
        advisor=model_settings_from_json(settings["advisor"]),
    )


def new_arcs(recorder: ArcRecorder | None, reported: dict[str, set[Arc]]) -> dict[str, list[list[int]]]:
    """The arcs recorded since the last report, as JSON lists; ``reported`` grows by them."""
    if recorder is None:
        return {}
    new: dict[str, list[list[int]]] = {}
    for path, arcs in recorder.arcs.items():
        sent = reported.setdefault(path, set())
        if len(arcs) == len(sent):
            continue  # arcs only grow, and every reported arc was recorded
        fresh = arcs - sent
        sent |= fresh
        new[path] = [list(arc) for arc in sorted(fresh)]
    return new
