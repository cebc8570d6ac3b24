"""The campaign as a process that runs executions for another rebuilds it, and how it reports what it ran.

Worker processes of ``--workers``, the tasks and actors of a Ray cluster
and the children that run a Ray worker's work again contained all start
from the campaign's settings as JSON (:mod:`dnsse.campaign.settings`),
rebuild the campaign and a strategy of their own here, and report each
execution as JSON (:mod:`dnsse.campaign.worker_reports`) to the process
that records it (:mod:`dnsse.campaign.intake`).

A bug is minimized where it was found, the first time that process sees
it: minimizing runs other schedules, which may kill the process they run
in, and a worker that dies is replaced while the recording process must
not die. The report stays the execution as it ran, with the minimized run
beside it (``minimized``).
"""

from __future__ import annotations

import dataclasses
from typing import Callable

from dnsse.campaign.campaign import Campaign, advisor_setup, watch_for
from dnsse.campaign.config import CampaignConfig
from dnsse.campaign.settings import config_from_settings
from dnsse.campaign.worker_reports import execution_report
from dnsse.engine.memory import is_exhausted
from dnsse.engine.runner import ExecutionResult
from dnsse.search.registry import make_strategy
from dnsse.search.strategy import Strategy


def strategy_for(config: CampaignConfig, worker: int = 0, workers: int = 1, model_calls: int | None = None) -> Strategy:
    """The strategy worker ``worker`` of ``workers`` runs, seeded by the campaign's seed.

    Each worker asks the advisor's model (if any) with its share of the
    calls, or with ``model_calls`` where the caller hands out the calls itself.
    """
    setup = advisor_setup(config, worker, workers)
    if model_calls is not None and setup.model is not None:
        setup = dataclasses.replace(setup, model=dataclasses.replace(setup.model, max_calls=model_calls))
    return make_strategy(config.strategy, config.seed, config.pct_depth, advisor=setup)


def rebuilt(settings: dict, worker: int = 0, workers: int = 1) -> tuple[Campaign, Strategy]:
    """The campaign of ``settings`` and the strategy of worker ``worker``, its monitors watching; not yet prepared."""
    config = config_from_settings(settings)
    strategy = strategy_for(config, worker, workers)
    campaign = Campaign(config, feedback=strategy.wants_feedback)
    watch_for(campaign, strategy)
    return campaign, strategy


class FirstSight:
    """Reports executions, minimizing each bug the first time this process sees it.

    ``found`` is told a bug as it was found before it is minimized, so that
    the recording process keeps it should minimizing kill this process.
    """

    def __init__(self, campaign: Campaign, found: Callable[[dict], None] | None = None) -> None:
        self.campaign = campaign
        self.found = found
        self._shrunk: set[tuple[str, str]] = set()

    def report(self, index: int, result: ExecutionResult, number: int | None = None) -> dict:
        """Execution ``index`` (from 0) as it ran, with ``minimized`` when its bug is new here; the framework must be active.

        ``number``: the execution's number in this process's flight recorder
        (``index + 1`` unless the process numbers its executions its own way).
        """
        report = execution_report(index, result)
        bug = result.bug
        if bug is None or is_exhausted(bug) or bug.signature() in self._shrunk:
            # Memory exhausted: running it again would exhaust it again; the recording process replays none of it.
            return report
        self._shrunk.add(bug.signature())
        if self.found is not None:
            self.found(report)
        smaller = self.campaign.minimized(result, index + 1 if number is None else number)
        report["minimized"] = execution_report(index, smaller)
        return report
