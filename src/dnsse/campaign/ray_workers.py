"""What every Ray task and actor of a campaign shares: joining the cluster, the settings, the campaign a worker keeps.

The driver joins the cluster (:func:`connect`) and hands each task or actor
the campaign's settings as JSON (:func:`task_settings`); a Ray worker
process rebuilds the campaign once and keeps it for the next tasks of the
same settings (:func:`campaign_for`). Reports are those of worker processes
(:mod:`dnsse.campaign.worker_reports`), timed by the task, with the arcs a
task saw going with its last report.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import dnsse
from dnsse.campaign.campaign import Campaign
from dnsse.campaign.config import CampaignConfig
from dnsse.campaign.settings import campaign_settings, config_from_settings
from dnsse.coverage.recorder import arc_recorder
from dnsse.engine.target import LoadedTarget
from dnsse.errors import BadInput
from dnsse.search.registry import make_strategy

# How long the driver waits for a task before it looks for a stop signal.
WAIT_S = 0.5


def connect(ray: object, config: CampaignConfig) -> int:
    """Join the cluster at ``config.ray_address``; the number of workers to keep busy."""
    try:
        if not ray.is_initialized():  # type: ignore[attr-defined]
            ray.init(  # type: ignore[attr-defined]
                address=config.ray_address,
                log_to_driver=False,
                logging_level=logging.ERROR,
                runtime_env={"py_modules": [str(Path(dnsse.__file__).parent)]},
            )
    except Exception as error:  # noqa: BLE001 - whatever Ray says, the user must fix the address or cluster
        raise BadInput(
            f"cannot join the Ray cluster at {config.ray_address!r}: {type(error).__name__}: {error}. "
            "Give the address `ray start --head` printed (HOST:PORT), or auto for the cluster of this machine"
        ) from None
    if config.workers > 1:
        return config.workers
    return max(1, int(ray.cluster_resources().get("CPU", 1)))  # type: ignore[attr-defined]


def task_settings(config: CampaignConfig, target: LoadedTarget) -> str:
    """The campaign's settings as a Ray task or actor reads them."""
    # A Ray worker's output reaches no one: it is captured, and shown with the bug it goes with.
    return json.dumps({**campaign_settings(config, target), "show_output": False})


# A worker process keeps the campaign it loaded for the next batches of the same settings.
_loaded: dict[str, Campaign] = {}


def campaign_for(settings_text: str) -> Campaign:
    """The campaign of these settings, loaded once per worker process, with a fresh arc recorder."""
    campaign = _loaded.get(settings_text)
    if campaign is None:
        config = config_from_settings(json.loads(settings_text))
        # Each task makes a strategy of its own, and watches with its monitors while it runs.
        campaign = Campaign(config, feedback=make_strategy(config.strategy, config.seed, config.pct_depth).wants_feedback)
        with campaign.framework.activate():
            campaign.prepare()
        _loaded.clear()
        _loaded[settings_text] = campaign
    if campaign.recorder is not None:
        campaign.recorder = arc_recorder(campaign.target.source_files)  # each task reports its own arcs
        if campaign.coverage_map is not None:
            campaign.coverage_map.recorder = campaign.recorder
    return campaign


def timed(report: dict, elapsed_s: float) -> dict:
    """A report (:class:`~dnsse.campaign.worker_campaign.FirstSight`'s) timed by the task, its arcs to come with the last."""
    report.update(elapsed_s=elapsed_s, arcs={})
    return report


def arcs_of(campaign: Campaign) -> dict[str, list[list[int]]]:
    """Every arc the task's recorder saw, as JSON lists."""
    if campaign.recorder is None:
        return {}
    return {path: [list(arc) for arc in sorted(arcs)] for path, arcs in campaign.recorder.arcs.items()}
