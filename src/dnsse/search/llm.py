"""``llm``: advisor-guided search.

The advisors (the offline heuristics always, a language model when the user
names an endpoint) read a summary of the runs so far and predict orderings and
input values likely to break the program. Each execution tries the most
promising untried hint (its confidence scaled by how well hints of its kind
paid off, see :mod:`dnsse.advisor.ledger`), with random choices filling the
rest of the schedule; with no hint left, the execution is a plain random one
whose steps feed the next round of advice. A hint that led to a bug or to an
order of dependent operations never seen before counts as useful.
"""

from __future__ import annotations

import heapq
import itertools
from pathlib import Path
from typing import Sequence

from dnsse.advisor.hints import Hint, InputHint, OrderingHint
from dnsse.advisor.ledger import Ledger
from dnsse.advisor.model import ModelAdvisor, ModelSettings
from dnsse.advisor.offline import OfflineAdvisor
from dnsse.advisor.stats import AdvisorStats
from dnsse.advisor.summary import InputSpec, RunSummary
from dnsse.search.guided import GuidedChooser
from dnsse.search.strategy import execution_seed


class LlmStrategy:
    name = "llm"

    def __init__(
        self,
        seed: int,
        source_path: Path,
        specs: Sequence[str] = (),
        model: ModelSettings | None = None,
        on_notice=lambda message: None,  # type: ignore[no-untyped-def]
    ) -> None:
        self.seed = seed
        self.summary = RunSummary(specs=list(specs))
        self.ledger = Ledger()
        self.offline = OfflineAdvisor()
        self.model = ModelAdvisor(model, source_path, on_notice) if model is not None else None
        self._queue: list[tuple[float, int, Hint]] = []
        self._order = itertools.count()
        self._slots: list = []
        self._current: tuple[GuidedChooser, Hint | None] | None = None

    @property
    def advisors(self) -> list:
        return [self.offline] + ([self.model] if self.model is not None else [])

    def stats(self) -> dict[str, dict]:
        """Each advisor's calls, tokens, latency, cache hits and hints received, tried and useful."""
        return {advisor.name: advisor.stats.to_json() for advisor in self.advisors}

    def chooser_for(self, execution: int) -> GuidedChooser:
        for advisor in self.advisors:
            for hint in advisor.advise(self.summary):
                heapq.heappush(self._queue, (-self.ledger.priority(hint), next(self._order), hint))
        hint = heapq.heappop(self._queue)[2] if self._queue else None
        seed = execution_seed(self.seed, execution)
        if isinstance(hint, OrderingHint):
            chooser = GuidedChooser(seed, ordering=hint)
        elif isinstance(hint, InputHint):
            chooser = GuidedChooser(seed, input_plan=self._input_plan(hint))
        else:
            chooser = GuidedChooser(seed)
        self._current = (chooser, hint)
        return chooser

    def observe(self, result) -> None:  # type: ignore[no-untyped-def]
        if self._current is None:
            return
        chooser, hint = self._current
        self._current = None
        self._learn_inputs(result)
        orders_before = len(self.summary.orders)
        bug = result.bug.render().splitlines()[0] if result.bug is not None else None
        self.summary.observe(chooser.steps, bug)
        if hint is None:
            return
        useful = result.bug is not None or len(self.summary.orders) > orders_before
        self.ledger.record(hint, useful)
        stats = self._stats_of(hint)
        stats.tried += 1
        stats.useful += int(useful)

    def close(self) -> None:
        if self.model is not None:
            self.model.close()

    def _stats_of(self, hint: Hint) -> AdvisorStats:
        return self.model.stats if self.model is not None and hint.source == self.model.name else self.offline.stats

    def _learn_inputs(self, result) -> None:  # type: ignore[no-untyped-def]
        self._slots = list(getattr(result, "slots", []))
        for slot in self._slots:
            if slot.parameter.name not in self.summary.inputs:
                self.summary.inputs[slot.parameter.name] = InputSpec.of(slot.parameter)

    def _input_plan(self, hint: InputHint) -> list[int | None]:
        """Answers for the execution's input choices: the hinted value's for its input, random elsewhere."""
        spec = self.summary.inputs[hint.name]
        indices = iter(spec.indices(hint.value))
        return [next(indices, None) if slot.parameter.name == hint.name else None for slot in self._slots]
