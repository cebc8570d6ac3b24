"""Parallel campaigns: executions in worker processes on this machine (DESIGN §7).

Worker ``w`` of ``N`` runs the execution indices ``w, w+N, w+2N, ...`` (from
0), each with the strategy's chooser for that index and the campaign seed,
so an index names the same execution whichever worker runs it. Workers stop
at the budget, at the time budget, or when the parent sets the stop event,
and report every execution to the parent as one JSON string on a queue:
plain data, so nothing of ours is pickled and traces stay JSON.

The parent owns the findings. It deduplicates bugs, minimizes each new one
itself (it has the target loaded and the framework at hand), writes the
trace, announces it, and, unless ``keep_going``, sets the stop event after
the first bug. With ``coverage``, each report carries the arcs that are new
in its worker, and the parent merges them into one recorder.

Processes are spawned, never forked: the parent has threads (torch's pools,
agents of past executions unwinding) that a fork would copy in whatever
state they were in. A spawned worker imports torch anew, so it takes a few
seconds to start. Ctrl-C reaches the parent only; the parent stops its
workers, waits a grace period, then terminates those still running.

Strategies learn per worker: ``pct`` estimates the length of a run from the
executions of its own worker. A trace records its choices, so it replays
whatever the worker had learnt. ``dfs``, whose executions each follow from
the ones before, divides its tree among the workers instead
(:mod:`dnsse.search.parallel_dfs`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import multiprocessing
import signal
import threading
import time
import traceback
from multiprocessing.process import BaseProcess
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from pathlib import Path
from queue import Empty
from typing import Callable, Iterator

from dnsse.coverage.arcs import Arc, ArcRecorder
from dnsse.engine.bugs import Bug
from dnsse.engine.inconclusive import Inconclusive
from dnsse.engine.choices import Choice
from dnsse.engine.execution import Limits
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
    advisor_setup,
    wants_feedback,
    watch_for,
)
from dnsse.search.registry import make_strategy
from dnsse.search.strategy import Strategy, notes_of

# How often the parent looks at its workers while no report arrives.
POLL_S = 0.2
# How long stopped workers may take to finish their execution before they are terminated.
GRACE_S = 3.0
# A worker that ended normally has said so; its last reports may lag its exit by this much.
EXIT_SETTLE_S = 1.0

Send = Callable[..., None]


def run_parallel(
    config: CampaignConfig,
    strategy: Strategy,
    on_bug: Callable[[FoundBug], None] | None = None,
    on_start: Callable[[LoadedTarget, Framework], None] | None = None,
    on_execution: Callable[[int, ExecutionResult, ArcRecorder | None], None] | None = None,
) -> CampaignResult:
    """The campaign of :func:`~dnsse.search.campaign.run_campaign`, run by ``config.workers`` processes.

    Execution numbers (``on_execution``, each bug's ``execution``) are the
    global index + 1, as in a sequential campaign; ``executions`` counts the
    reports the parent received. A script that calls this needs the
    ``if __name__ == "__main__":`` guard that spawned processes ask for.
    """
    if hasattr(strategy, "exhausted"):
        # Imported here because the divided search is built on this module.
        from dnsse.search.parallel_dfs import run_parallel_dfs

        return run_parallel_dfs(config, on_bug, on_start, on_execution)
    campaign = Campaign(config, on_bug, feedback=wants_feedback(strategy))
    with campaign.framework.activate():
        campaign.prepare()
        if on_start is not None:
            on_start(campaign.target, campaign.framework)
    workers = config.workers if config.budget is None else min(config.workers, config.budget)
    # Workers compare the time budget with the wall clock, the one clock every process shares.
    deadline = (
        None
        if config.time_budget is None
        else time.time() + config.time_budget - (time.perf_counter() - campaign.started)
    )
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    stop = context.Event()
    processes = [
        context.Process(
            target=_work,
            args=(_settings(config, campaign.target, worker, workers, deadline), queue, stop),
            name=f"dnsse-worker-{worker}",
            # If the parent dies without cleaning up, multiprocessing still ends its daemons.
            daemon=True,
        )
        for worker in range(workers)
    ]
    notes: dict[int, dict[str, int]] = {}
    try:
        with _sigint_ignored():
            for process in processes:
                process.start()
        executions = _collect(campaign, processes, queue, stop, on_execution, notes)
    finally:
        _shut_down(processes, queue, stop)
    search: dict[str, int] = {}
    for counts in notes.values():
        for name, count in counts.items():
            search[name] = search.get(name, 0) + count
    return campaign.result(strategy.name, executions, search=search)


def _settings(config: CampaignConfig, target: LoadedTarget, worker: int, workers: int, deadline: float | None) -> str:
    """What a worker needs to rebuild the campaign, as JSON (paths made absolute)."""
    return json.dumps(
        {
            "worker": worker,
            "workers": workers,
            "deadline": deadline,
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
            "advisor": model_settings_json(config.advisor),
        }
    )


def _collect(
    campaign: Campaign,
    processes: list[BaseProcess],
    queue: Queue,
    stop: Event,
    on_execution: Callable[[int, ExecutionResult, ArcRecorder | None], None] | None,
    notes: dict[int, dict[str, int]],
) -> int:
    """Receive reports until every worker is done; the number of executions reported.

    ``notes`` gets each worker's latest strategy notes (counts over its executions so far).
    """
    config = campaign.config
    executions = 0
    running = set(range(len(processes)))
    dead_since: dict[int, float] = {}
    while running:
        try:
            message = json.loads(queue.get(timeout=POLL_S))
        except Empty:
            _check_alive(processes, running, dead_since)
            continue
        kind, worker = message["kind"], message["worker"]
        # "started" needs no answer: a worker sends it only to start its queue's feeder thread.
        if kind == "done":
            running.discard(worker)
        elif kind == "failed":
            raise _worker_failure(worker, message)
        elif kind == "execution":
            executions += 1
            notes[worker] = message["notes"]
            number = message["index"] + 1
            result = result_from_report(message)
            merge_reported_arcs(campaign.recorder, message["arcs"])
            adopt = getattr(campaign.framework, "adopt_semantics", None)
            if adopt is not None:
                adopt(message["semantics"])
            if on_execution is not None:
                on_execution(number, result, campaign.recorder)
            # Without keep_going only the first bug counts; workers may report more before they stop.
            if result.inconclusive is not None:
                campaign.record(result, number)
                if not config.keep_going:
                    stop.set()  # like a bug: the next executions would likely hang too
            elif result.bug is not None and (config.keep_going or not campaign.found):
                if not config.keep_going:
                    stop.set()  # first, so that workers wind down while the parent minimizes
                with campaign.framework.activate():
                    campaign.record(result, number)
    return executions


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


def _worker_failure(worker: int, message: dict) -> BadInput:
    if message["bad_input"]:
        return BadInput(message["error"])
    failure = BadInput(
        f"worker process {worker} failed with {message['error']}. "
        "Run the same command with --workers 1 --debug to see the error in one process"
    )
    # --debug prints notes with the traceback: there the worker's own traceback shows.
    failure.add_note(f"traceback in worker {worker}:\n{message['traceback']}")
    return failure


def _check_alive(processes: list[BaseProcess], running: set[int], dead_since: dict[int, float]) -> None:
    """A worker that exited without saying it was done is a clear error, not a hang."""
    now = time.perf_counter()
    for worker in running:
        process = processes[worker]
        if process.is_alive():
            continue
        if now - dead_since.setdefault(worker, now) >= EXIT_SETTLE_S:
            raise BadInput(
                f"worker process {worker} exited ({_exit_text(process.exitcode)}) before it finished its "
                "executions, e.g. killed for memory or by the program itself. Run the same command with "
                "--workers 1 to check the program in one process"
            )


def _exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        return f"killed by {signal.Signals(-code).name}"
    return f"exit status {code}"


def _shut_down(processes: list[BaseProcess], queue: Queue, stop: Event) -> None:
    """Stop the workers, give them a grace period to finish, then terminate the rest; join all."""
    stop.set()
    started = [process for process in processes if process.pid is not None]
    try:
        until = time.perf_counter() + GRACE_S
        while any(process.is_alive() for process in started) and time.perf_counter() < until:
            # A worker exits only once its queued reports are in the pipe, so keep reading them.
            with contextlib.suppress(Empty):
                queue.get(timeout=POLL_S)
    finally:
        for process in started:
            if process.is_alive():
                process.terminate()
        for process in started:
            process.join(timeout=GRACE_S)
            if process.is_alive():
                process.kill()
                process.join()
        queue.close()


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Start workers with SIGINT ignored (they inherit it), so Ctrl-C stops them through the parent."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread handles signals; a campaign run from another thread keeps them as they are
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _work(settings_text: str, queue: Queue, stop: Event) -> None:
    """The body of a worker process: run its share of the executions and report each one."""
    settings = json.loads(settings_text)
    worker = settings["worker"]

    def send(kind: str, **fields: object) -> None:
        queue.put(json.dumps({"kind": kind, "worker": worker, **fields}))

    # The first put starts the queue's feeder thread. It must be a real thread,
    # so it starts before activate() (threads targets replace threading.Thread).
    send("started")
    try:
        _run_share(settings, stop, send)
    except BadInput as error:
        send("failed", bad_input=True, error=str(error))
    except Exception as error:  # noqa: BLE001 - any crash must reach the parent as a message, not a hang
        send(
            "failed", bad_input=False, error=f"{type(error).__name__}: {error}", traceback=traceback.format_exc()
        )
    else:
        send("done")


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
        inputs=settings["inputs"],
        advisor=model_settings_from_json(settings["advisor"]),
    )


def _run_share(settings: dict, stop: Event, send: Send) -> None:
    worker, workers, deadline = settings["worker"], settings["workers"], settings["deadline"]
    config = config_from_settings(settings)
    strategy = make_strategy(
        config.strategy, config.seed, config.pct_depth, advisor=advisor_setup(config, worker, workers)
    )
    campaign = Campaign(config, feedback=wants_feedback(strategy))
    watch_for(campaign, strategy)
    parent = multiprocessing.parent_process()
    reported: dict[str, set[Arc]] = {}
    with campaign.framework.activate():
        campaign.prepare()
        for index in itertools.count(worker, workers):
            if config.budget is not None and index >= config.budget:
                break
            if stop.is_set() or (deadline is not None and time.time() >= deadline):
                break
            if parent is not None and not parent.is_alive():
                break  # nobody left to report to
            result = campaign.execute(strategy.chooser_for(index))
            strategy.observe(result)
            send(
                "execution",
                index=index,
                bug=result.bug.to_json() if result.bug is not None else None,
                choices=[choice.to_json() for choice in result.choices],
                inputs={name: show_value(value) for name, value in result.inputs.items()},
                steps=result.steps,
                elapsed_s=result.elapsed_s,
                divergence=result.divergence,
                inconclusive=result.inconclusive.to_json() if result.inconclusive is not None else None,
                arcs=new_arcs(campaign.recorder, reported),
                notes=notes_of(strategy),
                semantics=getattr(campaign.framework, "semantics", None),
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
