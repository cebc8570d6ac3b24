"""A worker process of a divided ``dfs`` (see :mod:`dnsse.campaign.local_dfs`): slices of the units it is sent.

The worker reads its inbox for a unit, explores a slice below the unit's
prefix (:func:`~dnsse.search.dfs_slice.run_slice`) and reports, on its own
pipe, each execution as it ends, the footprint of the prefix's last step
after the first, and the slice. Its executions run with a flight recorder
(:mod:`dnsse.engine.flight`), numbered by this process from 1: if the
program kills the process, the parent reads which execution it was and
the choices that lead there. It minimizes the bugs it finds itself, for the
same reason (minimizing runs other schedules, which may kill it too): the
parent holds the bug as found until the minimized one arrives.
"""

from __future__ import annotations

import ctypes
import json
import multiprocessing
from multiprocessing.connection import Connection
from pathlib import Path

from dnsse.engine.flight import FlightRecorder, recorder_capacity
from dnsse.engine.memory import is_exhausted
from dnsse.engine.runner import ExecutionResult
from dnsse.campaign.campaign import Campaign
from dnsse.search.dfs import DfsStrategy
from dnsse.search.dfs_slice import SliceLimits, run_slice
from dnsse.campaign.local_worker import Send, exit_worker, serve
from dnsse.campaign.worker_processes import POLL_S
from dnsse.campaign.worker_campaign import FirstSight, rebuilt
from dnsse.campaign.worker_reports import new_arcs, semantics_of

# What the parent puts in a worker's inbox besides units: end the slice after the running execution.
YIELD = "yield"


def dfs_worker_main(settings_text: str, pipe: Connection, stop: ctypes.c_bool, inbox: Connection) -> None:
    """A worker process of a divided dfs: the units its inbox brings, until it is stopped."""
    serve(settings_text, pipe, lambda settings, send: _explore(settings, stop, inbox, send))
    exit_worker(pipe)


class _Slices:
    """Runs the executions of this worker's slices: recorded, reported, and minimized when they show a bug."""

    def __init__(self, campaign: Campaign, recorder: FlightRecorder, stop: ctypes.c_bool, inbox: Connection, send: Send) -> None:
        self.campaign = campaign
        self.recorder = recorder
        self.stop = stop
        self.inbox = inbox
        self.send = send
        self.ran = 0
        # Threads left running or memory exhausted: a fresh process should go on after this slice.
        self.unfit = False
        self.yielded = False
        self._reported: dict = {}
        # Before minimizing: the parent holds the bug as found should minimizing kill this process.
        self._sight = FirstSight(campaign, found=lambda report: send("found", **report))

    def execute(self, search: DfsStrategy, number: int) -> ExecutionResult:
        campaign = self.campaign
        self.ran += 1
        self.recorder.begin(self.ran)
        try:
            result = campaign.execute(self.recorder.wrap(search.chooser_for(number)))
        finally:
            self.recorder.end()
        # Numbered by this process from 1 in its flight recorder, indexed from 0 in its reports.
        self.send(
            "execution",
            **self._sight.report(self.ran - 1, result),
            arcs=new_arcs(campaign.recorder, self._reported),
            semantics=semantics_of(campaign.framework),
        )
        if result.abandoned or is_exhausted(result.bug):
            self.unfit = True
        return result  # the search goes on from the run as it was, not from the minimized one

    def should_yield(self) -> bool:
        """Whether to end the slice now: stopped, unfit, or asked to hand the frontier back."""
        while not self.yielded and self.inbox.poll(0):
            self.yielded = _read(self.inbox) in (YIELD, None)
        return self.yielded or self.unfit or bool(self.stop.value)


def _explore(settings: dict, stop: ctypes.c_bool, inbox: Connection, send: Send) -> dict | None:
    """Explore the units the inbox brings; ``{}`` when a fresh process should take over (see serve)."""
    # The worker runs the dfs slices it is sent (below), not a strategy of its own.
    campaign, _ = rebuilt(settings)
    config = campaign.config
    recorder = FlightRecorder(Path(settings["flight"]), recorder_capacity(config.limits.max_steps))
    campaign.watch(recorder)
    campaign.flight = recorder
    slices = _Slices(campaign, recorder, stop, inbox, send)
    with campaign.framework.activate():
        campaign.prepare()
        while True:
            message = _next_unit(inbox, stop)
            if message is None:
                return None
            slices.yielded = False
            done = run_slice(
                config.preemption_bound,
                message["prefix"],
                SliceLimits(message["executions"], slices.should_yield),
                slices.execute,
                on_first=lambda footprint: send("footprint", footprint=footprint),
            )
            send("slice", slice=done.to_json())
            if slices.unfit:
                return {}


def _next_unit(inbox: Connection, stop: ctypes.c_bool) -> dict | None:
    """The next unit from the inbox; ``None`` when the worker should end (stopped, or the parent is gone)."""
    parent = multiprocessing.parent_process()
    while True:
        if stop.value or (parent is not None and not parent.is_alive()):
            return None
        if not inbox.poll(POLL_S):
            continue
        message = _read(inbox)
        if message is None:
            return None
        if message != YIELD:  # a request that came after its slice had ended: nothing to hand back
            return message


def _read(inbox: Connection) -> object:
    """One message of the inbox; ``None`` (the end) when the parent closed it."""
    try:
        return json.loads(inbox.recv_bytes())
    except (EOFError, OSError):
        return None
