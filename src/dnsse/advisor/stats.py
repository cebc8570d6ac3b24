"""What an advisor cost and what it was worth, for the report and ``--json``."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field

MAX_EXAMPLES = 20
MAX_FOUND = 10  # hints that found a bug, kept for the report (with --keep-going there may be many)
MAX_KINDS = 20
# Quoted names and numbers differ from hint to hint; the rest of a refusal says what kind it is.
_PARTICULARS = re.compile(r"'[^']*'|\"[^\"]*\"|-?\d+(?:\.\d+)?(?:e-?\d+)?")


@dataclass
class AdvisorStats:
    calls: int = 0  # requests sent to a model
    cache_hits: int = 0  # requests answered from the on-disk cache
    failures: int = 0  # requests that failed (HTTP error, timeout, dropped connection)
    abandoned: int = 0  # requests still in flight when the campaign ended
    malformed: int = 0  # answers that were not JSON
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0  # summed over answered and failed requests
    received: int = 0  # valid hints
    discarded: int = 0  # hints refused by validation
    discard_reasons: list[str] = field(default_factory=list)  # the first refusals, word for word
    discarded_by_reason: Counter = field(default_factory=Counter)  # every refusal, by kind
    tried: int = 0  # hints the search ran an execution for
    solved: int = 0  # ordering hints the schedule solver turned into an order of a recent run's steps
    useful: int = 0  # hints whose execution found new behaviour or a bug
    retried: int = 0  # of the tries, those of a useful hint tried again in another context
    gave_up: str | None = None  # why the advisor stopped asking, if it did
    # The hints whose execution found a bug ("crash: crash PS#1 after its call #1 of push"), the first few.
    found_bugs: list[str] = field(default_factory=list)
    # The hints tried, in the order they ran ("starve: delay worker#2's actor.submit at sgd.py:39"), the first few:
    # what the advisor chose, to compare campaigns (one seed chooses the same hints every time).
    first_tried: list[str] = field(default_factory=list)

    def discard(self, reasons: list[str]) -> None:
        """Count refusals of the hint gate (``"hint 3: no agent named 'x'"``) by kind, and keep a few."""
        self.discarded += len(reasons)
        self.discard_reasons.extend(reasons[: MAX_EXAMPLES - len(self.discard_reasons)])
        for reason in reasons:
            kind = _PARTICULARS.sub("_", reason.split(": ", 1)[-1])
            if kind not in self.discarded_by_reason and len(self.discarded_by_reason) >= MAX_KINDS:
                kind = "other"
            self.discarded_by_reason[kind] += 1

    def to_json(self) -> dict:
        record = asdict(self)
        record["discarded_by_reason"] = dict(self.discarded_by_reason)
        record["latency_s"] = round(self.latency_s, 3)
        record["precision"] = round(self.useful / self.tried, 3) if self.tried else None
        return record


def merge_stats_json(records: list[dict]) -> dict:
    """One advisor's counts of several workers (each as :meth:`AdvisorStats.to_json` wrote it), added up.

    Counts, tokens and latency (summed over requests) add; lists of examples
    are joined up to the same limit; counts by kind add by kind; precision is
    recomputed from the totals; for text (why the advisor stopped asking) the
    first one given is kept.
    """
    total: dict = {}
    for key, first in records[0].items():
        values = [record.get(key) for record in records]
        if key == "precision":
            continue
        if isinstance(first, bool) or first is None or isinstance(first, str):
            total[key] = next((value for value in values if value is not None), None)
        elif isinstance(first, (int, float)):
            total[key] = sum(values)
        elif isinstance(first, list):
            total[key] = [item for value in values for item in value][:MAX_EXAMPLES]
        elif isinstance(first, dict):
            by_kind: Counter = Counter()
            for value in values:
                by_kind.update(value)
            total[key] = dict(by_kind)
        else:
            total[key] = first
    total["latency_s"] = round(total["latency_s"], 3)
    total["precision"] = round(total["useful"] / total["tried"], 3) if total["tried"] else None
    return {key: total[key] for key in records[0]}
