"""What an advisor cost and what it was worth, for the report and ``--json``."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field

MAX_EXAMPLES = 20
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
    gave_up: str | None = None  # why the advisor stopped asking, if it did
    # The hints whose execution found a bug ("crash: crash PS#1 after its call #1 of push"), the first few.
    found_bugs: list[str] = field(default_factory=list)

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


# Fields of AdvisorStats.to_json that are not simply added up across workers.
_NOT_SUMMED = frozenset({"discard_reasons", "discarded_by_reason", "gave_up", "precision", "latency_s"})


def merge_stats_json(records: list[dict]) -> dict:
    """One advisor's counts of several workers (each as :meth:`AdvisorStats.to_json` wrote it), added up.

    Counts and tokens add; latency adds (it is summed over requests); the
    first refusals are kept up to the same limit; precision is recomputed
    from the totals; the first reason to stop asking is kept.
    """
    total: dict = {key: sum(record[key] for record in records) for key in records[0] if key not in _NOT_SUMMED}
    total["latency_s"] = round(sum(record["latency_s"] for record in records), 3)
    total["discard_reasons"] = [reason for record in records for reason in record["discard_reasons"]][:MAX_EXAMPLES]
    by_reason: Counter = Counter()
    for record in records:
        by_reason.update(record["discarded_by_reason"])
    total["discarded_by_reason"] = dict(by_reason)
    total["gave_up"] = next((record["gave_up"] for record in records if record["gave_up"] is not None), None)
    total["precision"] = round(total["useful"] / total["tried"], 3) if total["tried"] else None
    return {key: total[key] for key in records[0]}
