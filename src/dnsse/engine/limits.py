"""The limits of one execution: its steps, its wall-clock time, its delays and its unfair prefix.

Apart from the engine so that the command line and traces can name them
without importing the scheduler (a supervising process never runs one).
"""

from __future__ import annotations

from dataclasses import dataclass

from dnsse.engine.clock import DEFAULT_MAX_DELAY


@dataclass(frozen=True)
class Limits:
    max_steps: int = 200_000
    max_seconds: float = 20.0
    unwind_seconds: float = 2.0
    # The total virtual seconds the scheduler may stall runnable agents (``--max-delay``; inf: unbounded).
    max_delay: float = DEFAULT_MAX_DELAY
    # Steps of an execution during which a strategy may starve a runnable agent; past them the
    # scheduler is fair (see dnsse.engine.fairness).
    unfair_steps: int = 10_000
