"""Where a divided ``dfs`` stands (in worker processes or on Ray), for ``--resume``: its tree and the arcs its executions took.

The tree is saved as :mod:`dnsse.search.dfs_share_state` writes it; the
campaign's bugs and clock go with the saved campaign (:mod:`dnsse.campaign.control`).
"""

from __future__ import annotations

from dnsse.campaign.campaign import Campaign
from dnsse.campaign.control import CampaignControl
from dnsse.coverage.arcs import arcs_as_json, restore_arcs
from dnsse.search.dfs_share import DfsShare
from dnsse.search.dfs_share_state import restore_share, share_state


def division_state(campaign: Campaign, share: DfsShare) -> dict:
    """What a divided dfs saves (in worker processes or on Ray): its tree, and the arcs its executions took."""
    return {"share": share_state(share), "arcs": arcs_as_json(campaign.recorder)}


def resumed_division(control: CampaignControl | None, campaign: Campaign, share: DfsShare) -> int:
    """The executions a resumed divided dfs ran, its bugs, arcs and tree put back; 0 when not resuming."""
    saved = control.adopt(campaign, "dfs", campaign.config.workers) if control is not None else None
    if saved is None:
        return 0
    assert control is not None
    try:
        restore_arcs(campaign.recorder, saved.strategy_state["arcs"])
        restore_share(share, saved.strategy_state["share"])
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as error:
        raise control.damaged("dfs", error) from None
    return saved.executions
