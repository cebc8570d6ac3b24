"""A batch of a Ray campaign run again in child processes, after the program killed the Ray worker that ran it.

A Ray task runs its batch in the Ray worker's own process: the fast path.
A program that kills its process (``os._exit``, a segfault, a fatal signal)
kills that Ray worker, and Ray only tells the driver that the task's worker
died: not in which execution, nor with which choices. The driver then runs
the batch again as :func:`run_batch_contained`, on any node: its executions
run in a child process with a flight recorder, as the workers of
``--workers`` do (:mod:`dnsse.search.worker_pool`), so the execution that
kills the child comes back as a ``crash`` report (``crashed``: the driver
must not run it) with the choices that replay it, and a fresh child goes on
after it. The task itself never dies.
"""

from __future__ import annotations

import dataclasses
import json

from dnsse.errors import BadInput
from dnsse.search.parallel import POLL_S, _worker_main, worker_failure, worker_settings
from dnsse.search.ray_cluster import campaign_for, report_of
from dnsse.search.worker_death import MAX_DEATHS_WITHOUT_PROGRESS, death_message
from dnsse.search.worker_pool import WorkerPool


def run_batch_contained(settings_text: str, first: int, size: int) -> str:
    """Executions ``first .. first+size-1`` in child processes; their reports, crashes included, as JSON."""
    campaign = campaign_for(settings_text)
    # Nothing is minimized: neither here nor, for these reports (``contained``), in the driver,
    # because minimizing runs other schedules of a program known to kill its process.
    config = dataclasses.replace(campaign.config, budget=first + size, workers=1, minimize=False)
    pool = WorkerPool(
        _worker_main, lambda worker, start, files: worker_settings(config, campaign.target, 0, 1, None, start, files)
    )
    source = campaign.target.spec.path.name
    reports: list[dict] = []
    deaths = 0
    try:
        pool.start(0, first)
        running = True
        while running:
            for _, message in pool.receive(POLL_S):
                following = None
                if message is None:
                    death = pool.death(0)
                    if death.index is None:
                        deaths += 1
                        if deaths >= MAX_DEATHS_WITHOUT_PROGRESS:
                            raise BadInput(death_message(death))
                        following = reports[-1]["index"] + 1 if reports else first
                    else:
                        deaths = 0
                        crash = death.crash(pool.files(0), source)
                        crash.inputs = dict(campaign.pinned)
                        reports.append({**report_of(death.index, crash, 0.0), "crashed": True})
                        following = death.index + 1
                elif message["kind"] == "execution":
                    # A worker's report holds every field of a Ray report (see ray_cluster.report_of).
                    reports.append({key: value for key, value in message.items() if key not in ("kind", "worker")})
                elif message["kind"] == "replace":
                    pool.release(0)
                    following = message["index"] + 1
                elif message["kind"] == "failed":
                    raise worker_failure(0, message)
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
    return json.dumps([{**report, "contained": True} for report in reports])


def run_slice_contained(settings_text: str, prefix: list[dict], size: int) -> str:
    """A dfs slice below ``prefix`` in a child process (see dnsse.search.dfs_worker): reports, slice, and whether it was lost.

    The child that dies in an execution loses the slice (running it again
    would crash again at the same place): its reports so far and the crash
    come back with ``lost`` set, and the driver verifies nothing.
    """
    from dnsse.search.dfs_worker import dfs_worker_main

    campaign = campaign_for(settings_text)
    config = dataclasses.replace(campaign.config, workers=1, minimize=False)
    pool = WorkerPool(
        dfs_worker_main,
        lambda worker, start, files: worker_settings(config, campaign.target, 0, 1, None, start, files),
        inbox=True,
    )
    source = campaign.target.spec.path.name
    answer: dict = {"reports": [], "slice": None, "lost": False}
    deaths = 0
    try:
        pool.start(0, 0)
        pool.send(0, {"prefix": prefix, "executions": size})
        while answer["slice"] is None and not answer["lost"]:
            for _, message in pool.receive(POLL_S):
                if message is None:
                    death = pool.death(0)
                    if death.index is None:
                        deaths += 1
                        if deaths >= MAX_DEATHS_WITHOUT_PROGRESS:
                            raise BadInput(death_message(death))
                        answer["reports"].clear()  # the slice runs again whole
                        pool.start(0, 0)
                        pool.send(0, {"prefix": prefix, "executions": size})
                        continue
                    crash = death.crash(pool.files(0), source)
                    crash.inputs = dict(campaign.pinned)
                    answer["reports"].append({**report_of(death.index, crash, 0.0), "crashed": True})
                    answer["lost"] = True
                elif message["kind"] == "execution":
                    answer["reports"].append({key: value for key, value in message.items() if key not in ("kind", "worker")})
                elif message["kind"] == "slice":
                    answer["slice"] = message["slice"]
                elif message["kind"] == "failed":
                    raise worker_failure(0, message)
    finally:
        pool.shut_down()
    return json.dumps(answer)
