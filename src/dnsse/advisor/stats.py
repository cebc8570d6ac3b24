"""What an advisor cost and what it was worth, for the report and ``--json``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


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
    discard_reasons: list[str] = field(default_factory=list)
    tried: int = 0  # hints the search ran an execution for
    useful: int = 0  # hints whose execution found new behaviour or a bug
    gave_up: str | None = None  # why the advisor stopped asking, if it did

    def to_json(self) -> dict:
        record = asdict(self)
        record["latency_s"] = round(self.latency_s, 3)
        record["precision"] = round(self.useful / self.tried, 3) if self.tried else None
        return record
