"""The ``--json`` report of a campaign (DESIGN §3)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import dnsse
from dnsse.report.story import Story
from dnsse.campaign.config import CampaignResult


def campaign_report(result: CampaignResult, seed: int | None = None, stories: list[Story | None] | None = None) -> dict:
    """The report; ``seed`` is the campaign's, ``stories`` (one per bug, or None) give each bug's location."""
    told = list(stories) if stories is not None else []
    told += [None] * (len(result.bugs) - len(told))
    return {
        "version": dnsse.__version__,
        "seed": seed,
        "target": result.target,
        "framework": result.framework,
        # torch: whose semantics the runs modelled, "gloo" or "nccl" (what init_process_group asked for).
        "semantics": result.semantics,
        "strategy": result.strategy,
        "world_size": result.world_size,
        "executions": result.executions,
        "elapsed_s": round(result.elapsed_s, 3),
        "bugs": [
            {
                "kind": found.bug.kind,
                "message": found.bug.message,
                "execution": found.execution,
                "trace": str(found.trace_path),
                "inputs": found.inputs,
                # A campaign announces a bug only after its written trace replayed it.
                "confirmed_by_replay": True,
                "details": found.bug.details,
                # Where the run broke (the raising line of an exception, the failing step's line); null
                # where no story was told (a bug reported by the supervisor after its process died).
                "location": _location(story),
                # Executions that showed this bug, whichever agents played which part (--keep-going).
                "hits": found.hits,
            }
            for found, story in zip(result.bugs, told)
        ],
        # Measured only with --coverage: the line tracer costs time in every agent.
        "coverage": result.coverage.as_json() if result.coverage is not None else None,
        "verified": result.verified,
        # fuzz, symbolic and hybrid: what each engine did (hybrid has several).
        "engines": result.engines,
        # What the strategy says about its search, e.g. pct's spinning agents.
        "search": result.search,
        "unverified_reason": result.unverified,
        # Executions cut off by the wall-clock limit: neither bugs nor passes, and where each agent stood.
        "inconclusive": [run.to_json() for run in result.inconclusive],
        # Executions whose input the program rejected (dnsse.assume, argument checking): never bugs.
        "rejected": result.rejected,
        # llm and hybrid: per advisor (offline, model), calls, tokens, latency, cache hits, hints.
        "advisor": result.advisor,
        # The known failures of the target replayed before the search (null: none); their bugs have execution 0.
        "known_failures": result.known.to_json() if result.known is not None and result.known.replayed else None,
    }


def _location(story: Story | None) -> dict | None:
    lines = story.failing_lines() if story is not None else []
    return {"path": lines[0].path, "line": lines[0].line} if lines else None


def write_json_atomically(data: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".report-", suffix=".tmp", dir=path.parent)
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        json.dump(data, stream, indent=1)
    os.replace(temporary, path)
