"""The one narrow interface every search strategy implements, and what a strategy declares it can do.

A strategy hands the engine a :class:`~dnsse.engine.choices.Chooser` for each
execution and learns from the result: those two calls are all the engine and
the campaign loop need. The engine never knows which strategy is behind a
chooser; a new strategy is a new file and an entry in
:mod:`dnsse.search.registry`.

What else a strategy can do it declares here, with a default that means "not
this one": whether its executions can be divided among processes and how
(:class:`Division`), whether it runs out (``exhausted``, then ``verified``),
whether it learns from coverage, what it saves for ``--resume``, what it
counts. The campaign (:mod:`dnsse.campaign`) calls these; it never asks a
strategy whether it has an attribute.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from dnsse.engine.choices import Chooser
    from dnsse.engine.runner import ExecutionResult, Monitor
    from dnsse.search.corpus import Corpus
    from dnsse.search.saved_learning import Rerun


class Division(enum.Enum):
    """How the executions of a strategy may be divided among processes (``--workers``, a Ray cluster)."""

    # Execution i depends only on the seed and i: any process may run any execution (random, pct, pos, llm).
    INDEPENDENT = "independent"
    # Each execution learns from the ones before: processes run their share and merge what they learnt in
    # rounds, sharing one corpus (fuzz, symbolic, hybrid; see dnsse.search.corpus_share).
    ROUNDS = "rounds"
    # A systematic search of a tree whose subtrees processes explore apart (dfs; see dnsse.search.dfs_share).
    TREE = "tree"
    # Each execution follows from all the ones before and the search cannot be divided (ipb, idb).
    ONE_PROCESS = "one process"


class Strategy:
    """A search strategy: a chooser per execution, and what it learns from each result."""

    name: str = ""
    division: Division = Division.INDEPENDENT
    # Give each execution's result the coverage it added (coverage-guided strategies).
    wants_feedback: bool = False
    # A systematic search sets this once nothing is left to try; the campaign then stops.
    exhausted: bool = False

    def chooser_for(self, execution: int) -> Chooser:
        """The chooser that makes every choice of execution number ``execution`` (from 0)."""
        raise NotImplementedError

    def observe(self, result: ExecutionResult) -> None:
        """What the execution did; adaptive strategies learn from it."""

    @property
    def monitors(self) -> Sequence[Monitor]:
        """What watches every step of every execution for this strategy (llm, hybrid: the advisor's log)."""
        return ()

    def verified(self) -> dict | None:
        """Once ``exhausted``: what the finished search covered (DESIGN §3 ``verified``), or ``None``."""
        return None

    def unverified(self) -> str | None:
        """Once ``exhausted``: why the search promises nothing, when it does not."""
        return None

    def notes(self) -> dict[str, int]:
        """Counts about the search over every execution observed (pct: spinning caught); processes' add up."""
        return {}

    def engine_report(self) -> dict[str, dict[str, int]] | None:
        """Per engine of a portfolio or a coverage-guided strategy: executions, new coverage, bugs."""
        return None

    def advisor_report(self) -> dict[str, dict] | None:
        """Per advisor asked (llm, hybrid): its calls, tokens, latency, cache hits and hints."""
        return None

    def state(self) -> dict:
        """What the strategy learnt, as JSON, for ``--resume`` (``{}``: nothing to save)."""
        return {}

    def restore(self, state: dict, rerun: Rerun) -> None:
        """Take back what :meth:`state` saved; ``rerun`` runs recorded choices again where that rebuilds it."""

    def shared_learning(self) -> SharedLearning | None:
        """For :attr:`Division.ROUNDS`: the corpus the processes share and the solver's side, if any."""
        return None

    def share_among(self, worker: int, workers: int) -> None:
        """This process is worker ``worker`` of ``workers``: take only its share of what all derive alike."""

    def close(self) -> None:
        """The campaign is over: release what the strategy holds (a model client's connections)."""


class SharedLearning:
    """What the processes of a :attr:`Division.ROUNDS` search merge each round: a corpus, and what symbolic solved."""

    def __init__(self, corpus: Corpus, symbolic: object | None) -> None:
        self.corpus = corpus
        # The symbolic engine whose taken branch sides and asked queries are merged (None: no solving).
        self.symbolic = symbolic


def execution_seed(campaign_seed: int, execution: int) -> int:
    """A per-execution seed: executions are reproducible one by one, in any order."""
    return (campaign_seed * 1_000_003 + execution * 7_919) % (2**61 - 1)
