"""A campaign's configuration as plain JSON, for the processes that run its executions elsewhere.

Worker processes of ``--workers`` and the tasks and actors of a Ray
cluster rebuild the campaign from these settings: nothing of ours is
pickled, and a file path is made absolute, since the process reading it
may not share the working directory.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from dnsse.advisor.settings import model_settings_from_json, model_settings_json
from dnsse.engine.execution import Limits
from dnsse.engine.target import LoadedTarget
from dnsse.campaign.config import CampaignConfig


def campaign_settings(config: CampaignConfig, target: LoadedTarget) -> dict:
    """What another process needs to run the executions of ``config``'s campaign on ``target``."""
    return {
        "target": str(target.spec),
        "directory": str(target.spec.directory or ""),
        "framework": target.framework,
        "world_size": config.world_size,
        "strategy": config.strategy,
        "seed": config.seed,
        "budget": config.budget,
        "pct_depth": config.pct_depth,
        "preemption_bound": config.preemption_bound,
        "limits": dataclasses.asdict(config.limits),
        "coverage": config.coverage,
        "specs": list(config.specs),
        "spec_files": [str(Path(path).resolve()) for path in config.spec_files],
        "faults": config.faults,
        "inputs": config.inputs,
        "advisor": model_settings_json(config.advisor),
        "minimize": config.minimize,
        "show_output": config.show_output,
    }


def config_from_settings(settings: dict) -> CampaignConfig:
    """The campaign of :func:`campaign_settings` (worker or task fields besides them are ignored)."""
    return CampaignConfig(
        target=settings["target"],
        directory=Path(settings["directory"]) if settings.get("directory") else None,
        framework=settings["framework"],
        world_size=settings["world_size"],
        strategy=settings["strategy"],
        budget=settings["budget"],
        seed=settings["seed"],
        limits=Limits(**settings["limits"]),
        pct_depth=settings["pct_depth"],
        preemption_bound=settings["preemption_bound"],
        coverage=settings["coverage"],
        specs=settings["specs"],
        spec_files=[Path(path) for path in settings["spec_files"]],
        faults=settings["faults"],
        show_output=settings["show_output"],
        minimize=settings["minimize"],
        inputs=settings["inputs"],
        advisor=model_settings_from_json(settings["advisor"]),
    )
