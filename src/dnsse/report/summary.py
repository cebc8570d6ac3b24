"""The ``--json`` report of a campaign (DESIGN §3)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from dnsse.search.campaign import CampaignResult


def campaign_report(result: CampaignResult) -> dict:
    return {
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
            }
            for found in result.bugs
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
        # llm and hybrid: per advisor (offline, model), calls, tokens, latency, cache hits, hints.
        "advisor": result.advisor,
    }


def write_json_atomically(data: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".report-", suffix=".tmp", dir=path.parent)
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        json.dump(data, stream, indent=1)
    os.replace(temporary, path)
