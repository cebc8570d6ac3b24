"""The report files of a campaign besides ``--json``: JUnit XML, SARIF, each written atomically."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from dnsse.report.junit import junit_report
from dnsse.report.sarif import sarif_report
from dnsse.report.story import Story
from dnsse.search.campaign import CampaignResult


def write_reports(arguments: argparse.Namespace, result: CampaignResult, stories: list[Story | None]) -> None:
    """Write the reports the options ask for (``--junit``, ``--sarif``)."""
    if arguments.junit is not None:
        write_text_atomically(junit_report(result, stories, arguments.seed), arguments.junit)
    if arguments.sarif is not None:
        write_text_atomically(json.dumps(sarif_report(result, stories), indent=1) + "\n", arguments.sarif)


def write_text_atomically(text: str, path: Path) -> None:
    """The file appears complete or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}-", suffix=".tmp", dir=path.parent)
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        stream.write(text)
    os.replace(temporary, path)
