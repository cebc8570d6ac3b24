"""The executor that runs a campaign's executions on a Ray cluster (``--ray-address ADDR|auto``, DESIGN §7).

Each way a strategy divides has its own form on Ray, beside the local one
(:mod:`dnsse.campaign.local_processes`):

- independent executions run in batches, one Ray task each (:mod:`dnsse.campaign.ray_batches`);
- a directed search's rounds run in Ray actors, one per worker (:mod:`dnsse.campaign.ray_rounds`);
- a dfs tree is divided into slices, one Ray task each (:mod:`dnsse.campaign.ray_dfs`).

A program that kills its process kills the Ray worker that runs it; that
work runs again in child processes that may die (:mod:`dnsse.campaign.ray_contained`).
"""

from __future__ import annotations

from types import ModuleType

from dnsse.campaign.config import CampaignResult
from dnsse.campaign.executor import CampaignRun
from dnsse.errors import BadInput


class OnRay:
    """Executions as Ray tasks and actors on the cluster at ``config.ray_address`` (see the module)."""

    option = "--ray-address"
    divides = True

    def independent(self, run: CampaignRun) -> CampaignResult:
        from dnsse.campaign.ray_batches import run_batches

        return run_batches(_ray(), run)

    def rounds(self, run: CampaignRun) -> CampaignResult:
        if run.control.resume is not None:
            raise BadInput(
                f"--resume on a Ray cluster continues batch strategies and dfs, not {run.strategy.name}, whose "
                "actors' rounds are not saved: run the campaign again, or resume it on this machine with --workers"
            )
        from dnsse.campaign.ray_rounds import run_rounds

        return run_rounds(_ray(), run)

    def tree(self, run: CampaignRun) -> CampaignResult:
        from dnsse.campaign.ray_dfs import run_dfs

        return run_dfs(_ray(), run)


def _ray() -> ModuleType:
    """The real Ray, which only the driver and its tasks import: a target's ``import ray`` gets the controlled one."""
    try:
        import ray
    except ImportError:
        raise BadInput("--ray-address needs Ray installed in this environment (pip install ray)") from None
    return ray
