"""The limits of one execution: its steps and its wall-clock time.

Apart from the engine so that the command line and traces can name them
without importing the scheduler (a supervising process never runs one).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    max_steps: int = 200_000
    max_seconds: float = 20.0
    unwind_seconds: float = 2.0
