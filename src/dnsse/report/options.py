"""The options of ``dnsse check`` that say what the user sees and which reports are written."""

from __future__ import annotations

import argparse


def add_output_options(check: argparse.ArgumentParser) -> None:
    """Add ``--quiet``, ``--verbose`` and ``--show-output``."""
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
