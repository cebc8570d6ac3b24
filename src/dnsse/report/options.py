"""The options of ``dnsse check`` that say what the user sees and which reports are written."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_output_options(check: argparse.ArgumentParser) -> None:
    """Add ``--quiet``, ``--verbose``, ``--show-output`` and the report files besides ``--json``."""
    loudness = check.add_mutually_exclusive_group()
    loudness.add_argument(
        "-q", "--quiet", action="store_true",
        help="print only each bug (one line, its trace and replay command); no progress, story or summary",
    )
    loudness.add_argument(
        "-v", "--verbose", action="store_true",
        help="also print one line per execution (its outcome, steps and time)",
    )
    check.add_argument(
        "--show-output", action="store_true",
        help="let the program's own prints through in every execution (by default they are captured, "
        "and only the bug's run is shown)",
    )
    check.add_argument(
        "--junit", type=Path, default=None, metavar="PATH",
        help="write a JUnit XML report here: one failing test case per bug, with its story",
    )
    check.add_argument(
        "--sarif", type=Path, default=None, metavar="PATH",
        help="write a SARIF 2.1.0 report here: one result per bug, at the source lines of its failing steps",
    )
    check.add_argument(
        "--html", type=Path, default=None, metavar="PATH",
        help="write one self-contained HTML page here: each bug's run as a timeline, one lane per agent",
    )


def add_report_command(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """``dnsse report DIR``: the HTML page of a finished campaign."""
    report = commands.add_parser("report", help="draw the HTML page of a finished campaign")
    report.add_argument("directory", metavar="DIR", type=Path, help="the --out directory of a `dnsse check` run")
    report.add_argument(
        "--html", type=Path, default=None, metavar="PATH", help="where the page goes (default DIR/report.html)"
    )
    return report
