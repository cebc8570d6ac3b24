"""Where a ``--ray-address`` campaign stands, for ``--resume`` (the ``strategy_state`` of its saved state).

The driver takes batches in index order, so a batch campaign (random, pct,
pos, ...) stands at one number: the executions it took. Each batch builds
its strategy afresh from the seed and its indices, so nothing else is
learnt but the arcs seen. A resumed campaign hands out batches from that
index on and runs the executions the uninterrupted one would have run.

A divided ``dfs`` saves its shared tree (see
:mod:`dnsse.search.dfs_share_state`), the slices still in flight given back:
a resumed search explores them again whole.

The driver saves at batch (slice) boundaries, after a new bug or a while
since the last save, and when a signal stopped it; tasks still in flight are
cancelled and their executions not counted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dnsse.coverage.arcs import arcs_as_json, restore_arcs
from dnsse.search.dfs_share import DfsShare
from dnsse.campaign.dfs_progress import division_state

if TYPE_CHECKING:
    from dnsse.campaign.campaign import Campaign
    from dnsse.campaign.control import CampaignControl


def resumed_at(control: CampaignControl | None, campaign: Campaign, strategy: str) -> int:
    """The executions a resumed batch campaign took, its bugs and arcs put back; 0 when not resuming."""
    saved = control.adopt(campaign, strategy, campaign.config.workers) if control is not None else None
    if saved is None:
        return 0
    assert control is not None
    try:
        restore_arcs(campaign.recorder, saved.strategy_state["arcs"])
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise control.damaged(strategy, error) from None
    return saved.executions


def save_on_ray(
    control: CampaignControl, campaign: Campaign, strategy: str, executions: int, share: DfsShare | None = None
) -> None:
    """Save the campaign as it stands after ``executions`` taken in order (and ``share``, a divided dfs)."""
    learnt = {"arcs": arcs_as_json(campaign.recorder)} if share is None else division_state(campaign, share)
    control.save_learnt(campaign, strategy, executions, learnt, {}, workers=campaign.config.workers)
