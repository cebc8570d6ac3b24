"""The report files of a campaign besides ``--json``: JUnit XML, SARIF, HTML, and the campaign record.

``check`` always leaves ``campaign.json`` next to its traces (the JSON report
with the seed and what each strategy contributed), so that ``dnsse report
DIR`` can draw the HTML page of a finished campaign later.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from dnsse.engine.bugs import BugKind
from dnsse.errors import BadInput
from dnsse.report.html import html_page
from dnsse.report.junit import junit_report
from dnsse.report.sarif import sarif_report
from dnsse.report.story import Story, tell
from dnsse.report.summary import campaign_report
from dnsse.campaign.config import CampaignResult

CAMPAIGN_FILE = "campaign.json"


def campaign_summary(result: CampaignResult, seed: int, stories: list[Story | None] | None = None) -> dict:
    """The JSON report, with the seed and each strategy's contribution."""
    summary = campaign_report(result, seed, stories)
    if result.engines:
        # hybrid (and fuzz, symbolic): one row per engine; its branches are the ones it found first.
        summary["contributions"] = [
            {
                "strategy": name,
                "executions": counts["executions"],
                "bugs": counts["bugs"],
                "first_bug_execution": counts.get("first_bug_execution"),
                "branches_covered": counts["new_branches"],
            }
            for name, counts in result.engines.items()
        ]
        return summary
    summary["contributions"] = [
        {
            "strategy": result.strategy,
            "executions": result.executions,
            "bugs": len(result.bugs),
            "first_bug_execution": min((found.execution for found in result.bugs), default=None),
            "branches_covered": result.coverage.branches_covered if result.coverage is not None else None,
        }
    ]
    return summary


def write_reports(arguments: argparse.Namespace, result: CampaignResult, stories: list[Story | None]) -> None:
    """Write the campaign record under ``--out`` and the reports the options ask for."""
    summary = campaign_summary(result, arguments.seed, stories)
    write_text_atomically(json.dumps(summary, indent=1) + "\n", arguments.out / CAMPAIGN_FILE)
    if arguments.junit is not None:
        write_text_atomically(junit_report(result, stories, arguments.seed), arguments.junit)
    if arguments.sarif is not None:
        write_text_atomically(json.dumps(sarif_report(result, stories), indent=1) + "\n", arguments.sarif)
    if arguments.html is not None:
        write_text_atomically(html_page(summary, stories), arguments.html)


def report_directory(directory: Path, html: Path | None) -> Path:
    """Draw the HTML page of the finished campaign in ``directory``; the page's path."""
    record = directory / CAMPAIGN_FILE
    try:
        summary = json.loads(record.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInput(
            f"{directory} holds no finished campaign (no {CAMPAIGN_FILE}); give the --out directory of a "
            "`dnsse check` run (default .dnsse)"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BadInput(f"cannot read {record}: {error}") from None
    if not isinstance(summary, dict) or not isinstance(summary.get("bugs"), list):
        raise BadInput(f"{record} is not a dnsse campaign record")
    stories: list[Story | None] = []
    for bug in summary["bugs"]:
        trace = Path(str(bug.get("trace", "")))
        if not trace.exists():
            trace = directory / trace.name  # the record was written from another directory
        # A crash would kill this process if told here; `dnsse replay` runs it supervised.
        stories.append(None if bug.get("kind") == BugKind.CRASH else tell(trace))
    path = html if html is not None else directory / "report.html"
    write_text_atomically(html_page(summary, stories), path)
    return path


def write_text_atomically(text: str, path: Path) -> None:
    """The file appears complete or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}-", suffix=".tmp", dir=path.parent)
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        stream.write(text)
    os.chmod(temporary, 0o666 & ~_umask())  # mkstemp makes it private; a report is meant to be shared
    os.replace(temporary, path)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
