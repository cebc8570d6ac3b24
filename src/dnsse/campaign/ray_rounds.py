"""fuzz, symbolic and hybrid with ``--ray-address``: Ray actors share a sharded corpus, merged in rounds.

A directed search learns from every execution, so its workers must keep
what they learnt between batches: each worker is a Ray actor (one CPU),
holding its campaign and strategy for the whole campaign, exactly as a
worker process of ``--workers`` does. Round by round (see
:mod:`dnsse.search.corpus_share`), the driver asks every actor to apply
the previous merge and run its executions of the round (indices w, w+N,
... of the round, as the worker processes run them), waits for all, takes
their reports in index order (so the first bug of a round is the one of
the lowest execution number), and merges what they learnt in worker order.
So the same seed with the same number of workers runs the same executions
on a cluster as with ``--workers`` on one machine.

Everything crosses as JSON strings. A program that kills its process kills
the actor that ran it: the driver puts a
:class:`~dnsse.campaign.ray_contained.ContainedShardWorker` in its place,
which runs that round again, and the worker's later rounds, in child
processes that may die. The execution that kills one is a ``crash`` bug
with a replayable trace, and the campaign goes on. What the dead actor had
learnt is lost, so from then on the campaign may differ from one where no
actor died (as with ``--workers``).
"""

from __future__ import annotations

import contextlib
import json
import time
from types import ModuleType

from dnsse.campaign.config import CampaignResult
from dnsse.campaign.executor import CampaignRun
from dnsse.campaign.ray_contained import ContainedShardWorker
from dnsse.engine.isolation import remove_spare_directories
from dnsse.campaign.ray_workers import connect, task_settings, timed
from dnsse.campaign.worker_campaign import FirstSight, rebuilt
from dnsse.campaign.worker_reports import adopt_semantics, new_arcs, semantics_of
from dnsse.coverage.arcs import Arc
from dnsse.errors import BadInput
from dnsse.search.corpus_share import ROUND, Merger, Sharing

# How long a contained worker may take to stop its child and remove its files when the campaign ends.
CLOSE_S = 10.0


def run_rounds(ray: ModuleType, run: CampaignRun) -> CampaignResult:
    """The directed campaign, its workers Ray actors that merge what they learnt in rounds."""
    config = run.config
    campaign = run.prepared()
    workers = connect(ray, config)
    if config.budget is not None:
        workers = min(workers, config.budget)
    settings = task_settings(config, campaign.target)
    # Ray restarts no actor: one that died is replaced by a contained one (see ray_contained).
    actor_class = ray.remote(num_cpus=1, max_restarts=0)(ShardWorker)  # type: ignore[attr-defined]
    contained_class = ray.remote(num_cpus=1, max_restarts=0)(ContainedShardWorker)  # type: ignore[attr-defined]
    actors = [actor_class.remote(settings, worker, workers) for worker in range(workers)]
    contained: set[int] = set()  # the workers whose actor died, now contained
    merger = Merger()
    merges: list[str] = []  # every merge so far, for a replacement to start from
    intake = run.intake(campaign)
    answers: list[dict] = []
    number = 0
    try:
        while config.budget is None or number * ROUND * workers < config.budget:
            if campaign.out_of_time() or run.control.stop_signal is not None:
                break
            # The previous round is merged only when another follows, as worker processes merge.
            merged = json.dumps(merger.merge([answer["learnt"] for answer in answers])) if answers else None
            if merged is not None:
                merges.append(merged)
            calls = [actor.run_round.remote(number, merged) for actor in actors]
            answers = []
            for worker, call in enumerate(calls):
                try:
                    answer = json.loads(ray.get(call))  # type: ignore[attr-defined]
                except ray.exceptions.RayActorError:  # type: ignore[attr-defined]
                    # The program killed the actor: its round again, and its later ones, contained.
                    actors[worker] = contained_class.remote(settings, worker, workers, merges)
                    contained.add(worker)
                    answer = json.loads(ray.get(actors[worker].run_round.remote(number, None)))  # type: ignore[attr-defined]
                if "failed" in answer:
                    raise BadInput(answer["failed"])
                answers.append(answer)
            stopped = False
            for report in sorted((r for answer in answers for r in answer["reports"]), key=lambda r: r["index"]):
                if intake.take_report(report["index"] + 1, report):
                    stopped = True
                    break
            for worker, answer in enumerate(answers):
                adopt_semantics(campaign.framework, answer.get("semantics"))
                # A contained worker's children count apart, each a process of its own.
                for process, counts in answer.get("processes", [[worker, answer]]):
                    intake.totals.update((worker, process) if worker in contained else worker, counts)
            if stopped:
                break
            number += 1
    finally:
        with contextlib.suppress(Exception):  # what is left of a contained worker is removed at best
            ray.get([actors[worker].close.remote() for worker in contained], timeout=CLOSE_S)  # type: ignore[attr-defined]
        for actor in actors:
            ray.kill(actor)  # type: ignore[attr-defined]
    return run.result(campaign, intake, search={"merged_rounds": merger.merges, "shared_corpus_entries": merger.entries})


class ShardWorker:
    """A Ray actor: one worker of the divided search, its campaign and strategy kept between rounds."""

    def __init__(self, settings_text: str, worker: int, workers: int) -> None:
        self.campaign, self.strategy = rebuilt(json.loads(settings_text), worker, workers)
        self.config = self.campaign.config
        self.worker, self.workers = worker, workers
        with self.campaign.framework.activate():
            self.campaign.prepare()
        sharing = Sharing.of(self.strategy, self.campaign.coverage_map, worker, workers)
        assert sharing is not None, "only a strategy with a corpus is divided in rounds"
        self.sharing = sharing
        self.reported: dict[str, set[Arc]] = {}
        # Minimized here, not in the driver: minimizing may kill the process it runs in.
        self.sight = FirstSight(self.campaign)

    def run_round(self, number: int, merged: str | None) -> str:
        """Apply the previous round's merge, run this worker's executions of round ``number``; JSON."""
        if merged is not None:
            self.sharing.absorb(json.loads(merged))
        span = ROUND * self.workers
        budget = self.config.budget
        reports = []
        try:
            with self.campaign.framework.activate():
                for index in range(number * span + self.worker, (number + 1) * span, self.workers):
                    if budget is not None and index >= budget:
                        break
                    started = time.perf_counter()
                    result = self.campaign.execute(self.strategy.chooser_for(index))
                    self.strategy.observe(result)
                    reports.append(timed(self.sight.report(index, result), time.perf_counter() - started))
        finally:
            remove_spare_directories()  # the cluster may kill this actor's process, which removes nothing then
        if reports:
            reports[-1]["arcs"] = new_arcs(self.campaign.recorder, self.reported)
        return json.dumps(
            {
                "reports": reports,
                "learnt": self.sharing.learnt(),
                "notes": self.strategy.notes(),
                "engines": self.strategy.engine_report(),
                "advisor": self.strategy.advisor_report(),
                "semantics": semantics_of(self.campaign.framework),
            }
        )
