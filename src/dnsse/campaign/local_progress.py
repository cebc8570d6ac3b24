"""Where a campaign of ``--workers N`` stands, for ``--resume`` (the ``strategy_state`` of its saved state).

Worker ``w`` runs the indices ``w, w+N, w+2N, ...`` in order, so where it
stands is one number: the next index it runs. Each worker also learnt
something in its own process (pct's run length, the corpus of fuzz, the
advisor's summary, ...): when the campaign is stopped, each worker sends its
strategy's state and its coverage map (JSON, as a single process saves
them) before it ends, and they are saved per worker with the coverage the
parent merged. A resumed campaign starts each worker at its next index with
what it learnt, so it runs the executions the uninterrupted one would have
run. A state saved on the way (the campaign was killed, not stopped) holds
no worker's learning: those workers start afresh at their next index, as a
worker replaced after a crash does.

A directed search (``fuzz``, ``symbolic``, ``hybrid``) divides its work in
rounds merged by the parent (see :mod:`dnsse.campaign.local_rounds`): it
stops at the start of a round, and what each worker learnt is its state
there (its corpus keyed as merged), saved with the rounds merged and the
parent's merger. A resumed campaign merges on from the next round, so it
runs the executions, and finds the bugs, of the uninterrupted one. Such a
campaign saves its state only when stopped: one that was killed cannot be
resumed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dnsse.coverage.arcs import arcs_as_json, restore_arcs
from dnsse.errors import BadInput
from dnsse.search.saved_learning import coverage_state, restore_coverage

if TYPE_CHECKING:
    from dnsse.campaign.campaign import Campaign
    from dnsse.campaign.control import CampaignControl
    from dnsse.search.strategy import Strategy


@dataclass
class ParallelProgress:
    """The next index of each worker, and what each learnt (sent when the campaign was stopped)."""

    next: list[int]
    learnt: dict[int, dict] = field(default_factory=dict)
    # A directed search: the rounds merged and the merger (see RoundKeeper.state), None before any.
    rounds: dict | None = None

    def take_learnt(self, worker: int) -> dict | None:
        """What ``worker`` learnt before the stop, for its first process only (a replacement starts afresh)."""
        return self.learnt.pop(worker, None)


def resume_progress(control: CampaignControl | None, campaign: Campaign, strategy: str, workers: int) -> tuple[int, ParallelProgress]:
    """The executions already done and where each worker stands; a fresh start when not resuming."""
    saved = control.adopt(campaign, strategy, campaign.config.workers) if control is not None else None
    if saved is None:
        return 0, ParallelProgress(list(range(workers)))
    assert control is not None
    try:
        raw = saved.strategy_state
        progress = ParallelProgress(
            [int(index) for index in raw["next"]],
            {int(worker): dict(state) for worker, state in raw["learnt"].items()},
            None if raw.get("rounds") is None else dict(raw["rounds"]),
        )
        if len(progress.next) != workers or any(index % workers != worker for worker, index in enumerate(progress.next)):
            raise ValueError(f"it holds the places of {len(progress.next)} workers, not of {workers}")
        restore_arcs(campaign.recorder, raw["arcs"])
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise control.damaged(strategy, error) from None
    return saved.executions, progress


def save_progress(
    control: CampaignControl, campaign: Campaign, strategy: str, executions: int, progress: ParallelProgress
) -> None:
    learnt = {
        "next": progress.next,
        "learnt": {str(worker): state for worker, state in progress.learnt.items()},
        "arcs": arcs_as_json(campaign.recorder),
        "rounds": progress.rounds,
    }
    control.save_learnt(campaign, strategy, executions, learnt, {}, workers=campaign.config.workers)


def learnt_of(strategy: Strategy, campaign: Campaign) -> dict:
    """What a worker learnt: its strategy's state and its coverage map, as JSON."""
    coverage = campaign.coverage_map
    return {
        "strategy": strategy.state(),
        "coverage": coverage_state(coverage) if coverage is not None else {},
    }


def restore_learnt(strategy: Strategy, campaign: Campaign, learnt: dict) -> None:
    """In a worker: put back what it learnt before the stop; the framework must be active."""
    from dnsse.campaign.control import rerun_for

    try:
        if learnt["strategy"]:
            strategy.restore(learnt["strategy"], rerun_for(campaign))
        if learnt["coverage"] and campaign.coverage_map is not None:
            restore_coverage(campaign.coverage_map, learnt["coverage"])
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as error:
        raise BadInput(
            f"--resume: what the {strategy.name} strategy of a worker learnt is damaged ({error}); run the campaign again"
        ) from None
