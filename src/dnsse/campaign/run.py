"""``run_campaign``: a campaign's executions run by the executor its configuration asks for."""

from __future__ import annotations

from typing import Callable

from dnsse.campaign.campaign import advisor_setup
from dnsse.campaign.config import CampaignConfig, CampaignResult, FoundBug
from dnsse.campaign.control import CampaignControl
from dnsse.campaign.executor import CampaignRun, Executor, serve
from dnsse.campaign.in_process import InProcess
from dnsse.campaign.intake import OnExecution
from dnsse.engine.target import LoadedTarget
from dnsse.errors import BadInput
from dnsse.frameworks.base import Framework
from dnsse.search.registry import make_strategy


def run_campaign(
    config: CampaignConfig,
    on_bug: Callable[[FoundBug], None] | None = None,
    on_start: Callable[[LoadedTarget, Framework], None] | None = None,
    on_execution: OnExecution | None = None,
    control: CampaignControl | None = None,
) -> CampaignResult:
    """Run executions until the budget, or the first bug unless ``keep_going``.

    ``on_execution`` sees every execution (its number from 1, its result as
    it ran, and the arcs recorded so far when ``config.coverage`` is on).
    With ``config.workers > 1`` or ``config.contained`` the executions run
    in worker processes, and with ``config.ray_address`` as tasks on a Ray
    cluster. Otherwise they run in this process: a program that kills its
    process (``os._exit``, a segfault) kills the caller too. ``control``
    (the command line's) stops the campaign on a signal, saves the state for
    ``--resume`` and continues a resumed campaign (see dnsse.campaign.control).
    """
    if config.workers < 1:
        raise BadInput(f"--workers must be at least 1, got {config.workers}")
    strategy = make_strategy(
        config.strategy, config.seed, config.pct_depth, config.preemption_bound, advisor_setup(config)
    )
    if config.budget is not None and config.budget < 1:
        raise BadInput(f"--budget must be at least 1 execution, got {config.budget}")
    control = control if control is not None else CampaignControl(config.out, saving=False)
    run = CampaignRun(config, strategy, control, on_bug, on_start, on_execution)
    return serve(executor_for(config), run)


def executor_for(config: CampaignConfig) -> Executor:
    """Where the executions of ``config`` run: a Ray cluster, worker processes here, or this process."""
    # The executors that run elsewhere are imported when asked for: they cost a campaign here start-up time.
    if config.ray_address is not None:
        from dnsse.campaign.ray_executor import OnRay

        return OnRay()
    if config.workers > 1 or config.contained:
        from dnsse.campaign.local_processes import LocalProcesses

        return LocalProcesses()
    return InProcess()
