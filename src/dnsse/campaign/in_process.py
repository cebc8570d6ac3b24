"""The executor that runs a campaign's executions one after another in this process.

Every strategy runs here, whatever its division: one execution, then what
the strategy learns from it, then the next. A program that kills its
process (``os._exit``, a segfault) kills this one too; the command line
runs campaigns under a supervising process for that (dnsse.supervised),
and ``@dnsse.test`` runs them in a worker process (``contained``).
"""

from __future__ import annotations

from dnsse.campaign.campaign import Campaign, watch_for
from dnsse.campaign.config import CampaignResult
from dnsse.campaign.executor import CampaignRun
from dnsse.campaign.known_failures import remember, replay_known


class InProcess:
    """Executions in this process, in order (see the module)."""

    option = ""
    divides = False

    def independent(self, run: CampaignRun) -> CampaignResult:
        return _run_here(run)

    def rounds(self, run: CampaignRun) -> CampaignResult:
        return _run_here(run)

    def tree(self, run: CampaignRun) -> CampaignResult:
        return _run_here(run)


def _run_here(run: CampaignRun) -> CampaignResult:
    """Run executions until the budget, the strategy's end, or the first bug unless ``keep_going``."""
    config, strategy, control = run.config, run.strategy, run.control
    campaign = Campaign(config, run.on_bug, feedback=strategy.wants_feedback)
    watch_for(campaign, strategy)
    if control.recorder is not None:
        campaign.watch(control.recorder)
        campaign.flight = control.recorder
    campaign.on_phase = control.on_phase
    with campaign.framework.activate():
        campaign.prepare()
        # After prepare: restoring what a strategy learnt may run the target again.
        intake = run.intake(campaign, inside_framework=True, executions=control.restore(campaign, strategy))
        control.started(campaign)
        if run.on_start is not None:
            run.on_start(campaign.target, campaign.framework)
        # A resumed campaign replayed them when it began.
        known = replay_known(campaign) if config.known_failures and intake.executions == 0 else None
        stop = bool(campaign.found) and not config.keep_going
        while not stop and not strategy.exhausted and (config.budget is None or intake.executions < config.budget):
            if campaign.out_of_time() or control.stop_signal is not None:
                break
            number = intake.executions + 1
            try:
                result = campaign.execute(control.chooser(number, strategy.chooser_for(number - 1)))
            finally:
                control.ended()
            strategy.observe(result)
            stop = intake.take(number, result)
            control.after(campaign, strategy, intake.executions, result, last=stop)
    control.finish(lambda: control.save(campaign, strategy, intake.executions))
    if config.known_failures:
        remember(campaign, campaign.found)
    strategy.close()
    # A bug-free exhausted search is a statement; with a bug, the bug is the news.
    finished_clean = strategy.exhausted and not campaign.found
    # The one strategy's own counts, as it keeps them: CampaignRun.result adds up those of many processes.
    result = campaign.result(
        strategy.name,
        intake.executions,
        strategy.verified() if finished_clean else None,
        strategy.engine_report(),
        strategy.notes(),
        strategy.unverified() if finished_clean else None,
    )
    result.interrupted = control.stop_signal
    result.advisor = strategy.advisor_report()
    result.known = known
    return result
