"""Ray work run again in child processes, after the program killed the Ray worker that ran it.

A Ray task runs its batch in the Ray worker's own process, and an actor of
a directed search its rounds: the fast path. A program that kills its
process (``os._exit``, a segfault, a fatal signal) kills that Ray worker,
and Ray only tells the driver that the worker died: not in which execution,
nor with which choices. The driver then runs the work again here, on any
node: its executions run in a child process with a flight recorder, as the
workers of ``--workers`` do (:mod:`dnsse.campaign.worker_processes`), so the
execution that kills the child comes back as a ``crash`` report
(``crashed``: the driver must not run it) with the choices that replay it,
and a fresh child goes on after it. The Ray worker itself never dies.

- a batch (:func:`run_batch_contained`): every index of it, crashes included;
- a dfs slice (:func:`run_slice_contained`): lost with the crash (running it
  again would crash again at the same place);
- an actor of a directed search (:class:`ContainedShardWorker`): its
  replacement runs the round the actor died in, and its later rounds, in a
  child that takes the merges as the workers of ``--workers`` do
  (:mod:`dnsse.campaign.local_rounds`). What the dead actor had learnt is
  lost: the child starts afresh from the merges, as a worker process
  replaced after a death does.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Iterator

from dnsse.errors import BadInput
from dnsse.search.corpus_share import ROUND
from dnsse.campaign.local_worker import worker_main, worker_settings
from dnsse.campaign.local_rounds import write_round
from dnsse.campaign.ray_workers import campaign_for, timed
from dnsse.campaign.worker_death import MAX_DEATHS_WITHOUT_PROGRESS, death_message
from dnsse.campaign.worker_processes import POLL_S, WorkerProcesses
from dnsse.campaign.worker_reports import execution_report, worker_failure


@dataclass
class Child:
    """The one child process (slot 0 of ``pool``) that runs the work; its death read as a crash report."""

    pool: WorkerProcesses
    source: str
    pinned: dict
    deaths: int = 0  # deaths in a row outside any execution

    def heard(self) -> Iterator[dict]:
        """The child's messages as they arrive; its death as a ``died`` message.

        A ``died`` message carries the ``crash`` report of the execution it
        died in, or ``None`` when it died outside one. A ``failed`` child,
        or one that keeps dying outside any execution, raises :class:`BadInput`.
        """
        for _, message in self.pool.receive(POLL_S):
            if message is not None:
                if message["kind"] == "failed":
                    raise worker_failure(0, message)
                if message["kind"] == "execution":
                    self.deaths = 0
                    # A worker's report holds every field of a Ray report (see ray_workers.timed).
                    message = {key: value for key, value in message.items() if key != "worker"}
                yield message
                continue
            death = self.pool.death(0)
            if death.index is None:
                self.deaths += 1
                if self.deaths >= MAX_DEATHS_WITHOUT_PROGRESS:
                    raise BadInput(death_message(death))
                yield {"kind": "died", "crash": None}
            else:
                self.deaths = 0
                crash = death.crash(self.pool.files(0), self.source)
                crash.inputs = dict(self.pinned)
                yield {"kind": "died", "crash": {**timed(execution_report(death.index, crash), 0.0), "crashed": True}}


def _report(message: dict) -> dict:
    """An ``execution`` message as the report the driver takes (``contained``: not minimized again, see Intake.take_report)."""
    return {**{key: value for key, value in message.items() if key != "kind"}, "contained": True}


def run_batch_contained(settings_text: str, first: int, size: int) -> str:
    """Executions ``first .. first+size-1`` in child processes; their reports, crashes included, as JSON."""
    campaign = campaign_for(settings_text)
    # Nothing is minimized: neither here nor, for these reports (``contained``), in the driver,
    # because minimizing runs other schedules of a program known to kill its process.
    config = dataclasses.replace(campaign.config, budget=first + size, workers=1, minimize=False)
    pool = WorkerProcesses(
        worker_main, lambda worker, start, files: worker_settings(config, campaign.target, 0, 1, None, start, files)
    )
    child = Child(pool, campaign.target.spec.path.name, dict(campaign.pinned))
    reports: list[dict] = []
    try:
        pool.start(0, first)
        running = True
        while running:
            for message in child.heard():
                following = None
                if message["kind"] == "died":
                    if message["crash"] is not None:
                        reports.append(message["crash"])
                    following = reports[-1]["index"] + 1 if reports else first
                elif message["kind"] == "execution":
                    reports.append(message)
                elif message["kind"] == "replace":
                    pool.release(0)
                    following = message["index"] + 1
                elif message["kind"] == "done":
                    pool.release(0)
                    running = False
                if following is not None:
                    if following < first + size:
                        pool.start(0, following)
                    else:
                        running = False
    finally:
        pool.shut_down()
    return json.dumps([_report(report) for report in reports])


def run_slice_contained(settings_text: str, prefix: list[dict], size: int) -> str:
    """A dfs slice below ``prefix`` in a child process (see dnsse.campaign.local_dfs_worker): reports, slice, and whether it was lost.

    The child that dies in an execution loses the slice (running it again
    would crash again at the same place): its reports so far and the crash
    come back with ``lost`` set, and the driver verifies nothing.
    """
    from dnsse.campaign.local_dfs_worker import dfs_worker_main

    campaign = campaign_for(settings_text)
    config = dataclasses.replace(campaign.config, workers=1, minimize=False)
    pool = WorkerProcesses(
        dfs_worker_main,
        lambda worker, start, files: worker_settings(config, campaign.target, 0, 1, None, start, files),
        inbox=True,
    )
    child = Child(pool, campaign.target.spec.path.name, dict(campaign.pinned))
    answer: dict = {"reports": [], "slice": None, "lost": False}
    try:
        pool.start(0, 0)
        pool.send(0, {"prefix": prefix, "executions": size})
        while answer["slice"] is None and not answer["lost"]:
            for message in child.heard():
                if message["kind"] == "died" and message["crash"] is None:
                    answer["reports"].clear()  # the slice runs again whole
                    pool.start(0, 0)
                    pool.send(0, {"prefix": prefix, "executions": size})
                elif message["kind"] == "died":
                    answer["reports"].append(message["crash"])
                    answer["lost"] = True
                elif message["kind"] == "execution":
                    answer["reports"].append({key: value for key, value in message.items() if key != "kind"})
                elif message["kind"] == "slice":
                    answer["slice"] = message["slice"]
    finally:
        pool.shut_down()
    return json.dumps(answer)


class ContainedShardWorker:
    """A Ray actor in place of a directed search's actor that died: worker ``worker``'s rounds, in child processes.

    ``merges``: every merge the driver made before the round it runs first
    (JSON, in order); the child applies them as it starts. The child runs the
    worker's indices of a round, says what it learnt, and waits for the
    round's merge, which :meth:`run_round` of the next round writes for it.
    """

    def __init__(self, settings_text: str, worker: int, workers: int, merges: list[str]) -> None:
        campaign = campaign_for(settings_text)
        # Not minimized, as a contained batch (see run_batch_contained).
        config = dataclasses.replace(
            campaign.config, budget=json.loads(settings_text).get("budget"), workers=workers, minimize=False
        )
        self.budget = config.budget
        self.worker, self.workers = worker, workers
        self.pool = WorkerProcesses(
            worker_main,
            lambda _, start, files: worker_settings(config, campaign.target, worker, workers, None, start, files),
        )
        for number, merge_text in enumerate(merges):
            write_round(self.pool.directory, number, merge_text)
        self.child = Child(self.pool, campaign.target.spec.path.name, dict(campaign.pinned))
        self.next: int | None = None  # the next index this worker runs
        self.running = False

    def run_round(self, number: int, merged: str | None) -> str:
        """Round ``number`` as :meth:`ShardWorker.run_round <dnsse.campaign.ray_rounds.ShardWorker.run_round>` runs it; JSON.

        Reports of executions are ``contained``; a crash report is ``crashed``;
        ``processes`` holds each child's latest counts (a child replaced after
        a death counts apart); ``failed``, a child that failed (the error).
        """
        if merged is not None:
            write_round(self.pool.directory, number - 1, merged)
        span = ROUND * self.workers
        end = (number + 1) * span if self.budget is None else min((number + 1) * span, self.budget)
        if self.next is None or self.next < number * span:
            self.next = number * span + self.worker
        answer: dict = {"reports": [], "learnt": {"entries": []}, "processes": {}, "semantics": None}
        try:
            self._run(number, end, answer)
        except BadInput as error:
            return json.dumps({"failed": str(error)})
        answer["processes"] = sorted(answer["processes"].items())
        return json.dumps(answer)

    def _run(self, number: int, end: int, answer: dict) -> None:
        assert self.next is not None
        if not self.running:
            if self.next >= end:
                return  # its last execution of the round crashed: the next round starts a child
            self.pool.start(0, self.next)
            self.running = True
        while self.running:
            for message in self.child.heard():
                kind = message["kind"]
                if kind == "execution":
                    answer["reports"].append(_report(message))
                    self.next = message["index"] + self.workers
                    counts = {key: message.get(key) for key in ("notes", "engines", "advisor")}
                    answer["processes"][message["process"]] = counts
                    answer["semantics"] = message.get("semantics")
                elif kind == "learnt" and message.get("round") == number:
                    # The child ran its share of the round and waits for the round's merge.
                    answer["learnt"] = message["learnt"]
                    return
                elif kind in ("died", "replace", "done"):
                    if kind == "died":
                        if message["crash"] is not None:
                            answer["reports"].append(_report(message["crash"]))
                            self.next = message["crash"]["index"] + self.workers
                    else:
                        self.pool.release(0)
                        if kind == "replace":
                            self.next = message["index"] + self.workers
                    self.running = False
                    if kind != "done" and self.next < end:
                        self.pool.start(0, self.next)
                        self.running = True

    def close(self) -> None:
        """Stop the child and remove its files."""
        self.pool.shut_down()
