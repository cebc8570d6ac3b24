"""How a campaign's executions run: one interface, three executors.

An :class:`Executor` runs the executions of one campaign (:class:`CampaignRun`)
and returns its result. There are three: in this process
(:mod:`dnsse.campaign.in_process`), in worker processes on this machine
(:mod:`dnsse.campaign.local_processes`, ``--workers``), and on a Ray
cluster (:mod:`dnsse.campaign.ray_executor`, ``--ray-address``). The
strategy says how its executions may be divided (:class:`~dnsse.search.strategy.Division`),
and each executor serves each way through the same calls:

- :meth:`Executor.independent`: each execution depends only on the seed and
  its index, so any process may run any execution (striped over local
  workers, batched over Ray tasks);
- :meth:`Executor.rounds`: each execution learns from the ones before, so
  the processes run their share of a round and merge what they learnt;
- :meth:`Executor.tree`: a systematic search whose subtrees processes
  explore apart.

A strategy that runs in one process only (:attr:`Division.ONE_PROCESS`) is
refused by an executor that divides. Every execution, wherever it ran, and
every death of a worker enters the campaign through one intake
(:mod:`dnsse.campaign.intake`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Protocol

from dnsse.campaign.campaign import Campaign, prepared_campaign
from dnsse.campaign.config import CampaignConfig, CampaignResult, FoundBug
from dnsse.campaign.control import CampaignControl
from dnsse.campaign.intake import Intake, OnExecution
from dnsse.errors import BadInput
from dnsse.search.strategy import Division, Strategy

if TYPE_CHECKING:
    from dnsse.engine.target import LoadedTarget
    from dnsse.frameworks.base import Framework


@dataclass
class CampaignRun:
    """One campaign being run: its configuration, its strategy, its control, and who is told what happens."""

    config: CampaignConfig
    strategy: Strategy
    control: CampaignControl
    # Told each bug once it is minimized, written and confirmed.
    on_bug: Callable[[FoundBug], None] | None = None
    # Told once the target is loaded and checked, before the first execution.
    on_start: Callable[[LoadedTarget, Framework], None] | None = None
    # Told every execution: its number from 1, its result as it ran, the arcs recorded so far.
    on_execution: OnExecution | None = None

    def prepared(self, on_loaded: Callable[[], None] | None = None) -> Campaign:
        """The campaign, its target loaded and checked here before any other process starts (bad input at once)."""
        return prepared_campaign(
            self.config, self.on_bug, self.on_start, feedback=self.strategy.wants_feedback, on_loaded=on_loaded
        )

    def intake(
        self, campaign: Campaign, stop: Callable[[], None] | None = None, inside_framework: bool = False, executions: int = 0
    ) -> Intake:
        """Where this campaign's executions enter (see dnsse.campaign.intake)."""
        return Intake(campaign, self.on_execution, stop, inside_framework, executions)

    def result(
        self,
        campaign: Campaign,
        intake: Intake,
        verified: dict | None = None,
        unverified: str | None = None,
        search: dict | None = None,
    ) -> CampaignResult:
        """The campaign's result once its executions are over; the strategies' counts are the processes' added up."""
        totals = intake.totals
        result = campaign.result(
            self.strategy.name,
            intake.executions,
            verified=verified,
            engines=totals.engines(),
            search={**totals.notes(), **(search or {})},
            unverified=unverified,
        )
        result.interrupted = self.control.stop_signal
        result.advisor = totals.advisor()
        return result


class Executor(Protocol):
    """Runs the executions of a campaign somewhere; one method per way a strategy's executions divide."""

    # Where the executions run, and the option that asks for it (for messages): "--workers divides ...".
    option: str
    # Whether it divides executions among processes (then a one-process strategy is refused).
    divides: bool

    def independent(self, run: CampaignRun) -> CampaignResult:
        """Executions that depend only on the seed and their index."""
        ...

    def rounds(self, run: CampaignRun) -> CampaignResult:
        """Executions that learn from the ones before, merged in rounds."""
        ...

    def tree(self, run: CampaignRun) -> CampaignResult:
        """A systematic search whose subtrees are explored apart."""
        ...


def serve(executor: Executor, run: CampaignRun) -> CampaignResult:
    """Run ``run`` with ``executor`` the way its strategy divides."""
    division = run.strategy.division
    if division is Division.ONE_PROCESS:
        if executor.divides:
            name = run.strategy.name
            raise BadInput(
                f"the {name} search runs in one process: {executor.option} divides only the dfs search among "
                f"processes; leave {executor.option} out for {name}"
            )
        return executor.independent(run)
    if division is Division.TREE:
        return executor.tree(run)
    if division is Division.ROUNDS:
        return executor.rounds(run)
    return executor.independent(run)
