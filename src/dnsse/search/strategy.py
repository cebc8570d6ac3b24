"""The one narrow interface every search strategy implements.

A strategy hands the engine a :class:`~dnsse.engine.choices.Chooser` for each
execution and learns from the result. The engine never knows which strategy
is behind a chooser; a new strategy is a new file and an entry in
:mod:`dnsse.search.registry`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from dnsse.engine.choices import Chooser
    from dnsse.engine.runner import ExecutionResult


class Strategy(Protocol):
    name: str

    def chooser_for(self, execution: int) -> Chooser:
        """The chooser that makes every choice of execution number ``execution``."""
        ...

    def observe(self, result: ExecutionResult) -> None:
        """What the execution did; adaptive strategies learn from it."""
        ...


class ExhaustiveStrategy(Strategy, Protocol):
    """A strategy that can run out of executions to try (``dfs``).

    The campaign stops once ``exhausted`` is true; ``verified()`` then says
    what the finished search covered (DESIGN §3 ``verified``), or ``None``
    when it cannot promise anything, and ``unverified()`` says why not.
    """

    exhausted: bool

    def verified(self) -> dict | None: ...

    def unverified(self) -> str | None:
        """Why an exhausted search promises nothing (``None`` when it does)."""
        ...


class NotingStrategy(Strategy, Protocol):
    """A strategy with something to report about its search (``pct``: spinning it caught).

    ``notes()`` holds counts over every execution the strategy observed;
    counts of parallel workers add up.
    """

    def notes(self) -> dict[str, int]: ...


def notes_of(strategy: Strategy) -> dict[str, int]:
    """The strategy's notes, or none when it keeps no notes."""
    notes = getattr(strategy, "notes", None)
    return notes() if notes is not None else {}


def execution_seed(campaign_seed: int, execution: int) -> int:
    """A per-execution seed: executions are reproducible one by one, in any order."""
    return (campaign_seed * 1_000_003 + execution * 7_919) % (2**61 - 1)
