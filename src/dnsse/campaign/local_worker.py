"""The body of a worker process of a parallel campaign: its share of the executions, reported to the parent.

Worker ``w`` of ``N`` runs the indices ``w, w+N, ...`` from its ``start``
(see :mod:`dnsse.campaign.local_processes`), each reported on its pipe as JSON
(:mod:`dnsse.campaign.worker_reports`) before the next starts, through a
flight recorder that lets the parent name the execution the worker died in.
A directed search takes part in the rounds of
:mod:`dnsse.campaign.local_rounds`. :func:`serve` and :func:`exit_worker`
are the frame every worker body shares (the divided dfs's too).
"""

from __future__ import annotations

import contextlib
import ctypes
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
from typing import Callable

from dnsse.engine.isolation import remove_spare_directories
from dnsse.coverage.arcs import Arc
from dnsse.engine.flight import FlightRecorder, recorder_capacity
from dnsse.engine.memory import is_exhausted
from dnsse.engine.target import LoadedTarget
from dnsse.errors import BadInput, EngineFailure
from dnsse.campaign.config import CampaignConfig
from dnsse.campaign.settings import campaign_settings
from dnsse.search.corpus_share import Sharing, round_of
from dnsse.campaign.local_progress import learnt_of, restore_learnt
from dnsse.campaign.local_rounds import RoundWorker
from dnsse.campaign.worker_campaign import FirstSight, rebuilt
from dnsse.campaign.worker_death import WorkerFiles
from dnsse.campaign.worker_reports import new_arcs, semantics_of

Send = Callable[..., None]


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
    dnsse.campaign.local_progress); ``saving``: send what it learnt when stopped;
    ``applied``: a directed search's rounds merged before it starts, which ``learnt`` holds.
    """
    return json.dumps(
        {
            **campaign_settings(config, target),
            "worker": worker,
            "workers": workers,
            "start": worker if start is None else start,
            "deadline": deadline,
            "flight": str(files.flight) if files is not None else None,
            "rounds": str(files.flight.parent) if files is not None else None,
            "faults_file": str(files.faults) if files is not None else None,
            "learnt": learnt,
            "saving": saving,
            "applied": applied,
        }
    )


def worker_main(settings_text: str, pipe: Connection, stop: ctypes.c_bool) -> None:
    """A worker process of a parallel campaign: its share of the executions, then its exit."""
    run_worker(settings_text, pipe, stop)
    exit_worker(pipe)


def run_worker(settings_text: str, pipe: Connection, stop: ctypes.c_bool) -> None:
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
        # Where dnsse failed inside an execution, the agent's traceback says where; the worker's would not.
        where = error.traceback if isinstance(error, EngineFailure) else traceback.format_exc()
        send("failed", bad_input=False, error=f"{type(error).__name__}: {error}", traceback=where)
    else:
        if replace is None:
            send("done")
        else:
            send("replace", **replace)


def exit_worker(pipe: Connection) -> None:
    """End a worker process with an exit no thread of the program can hold up (see dnsse.cli.exit_now)."""
    pipe.close()
    remove_spare_directories()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(0)


def _run_share(settings: dict, stop: ctypes.c_bool, send: Send) -> dict | None:
    """Run and report executions; the index after which a fresh process should go on, if one should."""
    worker, workers, deadline = settings["worker"], settings["workers"], settings["deadline"]
    campaign, strategy = rebuilt(settings, worker, workers)
    config = campaign.config
    recorder = None
    if settings["flight"] is not None:
        recorder = FlightRecorder(Path(settings["flight"]), recorder_capacity(config.limits.max_steps))
        campaign.watch(recorder)
        campaign.flight = recorder
    parent = multiprocessing.parent_process()
    reported: dict[str, set[Arc]] = {}
    # Before minimizing: the parent holds the bug as found should minimizing kill this process.
    sight = FirstSight(campaign, found=lambda report: send("found", **report))
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
            send(
                "execution",
                **sight.report(index, result),
                arcs=new_arcs(campaign.recorder, reported),
                process=os.getpid(),
                notes=strategy.notes(),
                engines=strategy.engine_report(),
                advisor=strategy.advisor_report(),
                semantics=semantics_of(campaign.framework),
            )
            if result.abandoned or is_exhausted(result.bug):
                # Threads that would not stop slow every later execution, and the allocator may keep
                # the memory the program took: a fresh process goes on.
                return {"index": index}
        if stop.value and settings["saving"] and rounds is None:
            # Stopped before its share was done: what it learnt goes into the saved state, for --resume.
            send("learnt", learnt=learnt_of(strategy, campaign))
    return None
