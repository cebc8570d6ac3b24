"""What the advisors of ``llm`` and ``hybrid`` are given besides the runs.

Apart from :mod:`dnsse.search.llm` so that every campaign can say it without
importing the advisors and the solver, which only those strategies use.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from dnsse.advisor.settings import ModelSettings


def _tell(message: str) -> None:
    sys.stderr.write(f"dnsse: {message}\n")


@dataclass(frozen=True)
class AdvisorSetup:
    """What the advisors need besides the runs: the program's source, its specs, the model to ask."""

    source_path: Path | None = None
    specs: tuple[str, ...] = ()
    model: ModelSettings | None = None
    # Told once when the model stops being asked (dead endpoint, repeated failures).
    on_notice: Callable[[str], None] = _tell
