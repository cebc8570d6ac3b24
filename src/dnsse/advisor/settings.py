"""How to reach the language model of the advisor: endpoint, model, limits, cache.

Apart from :mod:`dnsse.advisor.model` so that the command line can take and
check the options without importing the advisor itself.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from dnsse.errors import BadInput

KEY_VARIABLES = ("DNSSE_LLM_API_KEY", "OPENAI_API_KEY")


@dataclass(frozen=True)
class ModelSettings:
    base_url: str
    model: str
    timeout_s: float = 30.0
    max_calls: int = 20
    concurrency: int = 2
    # Ask again once this many more executions have run since the last request.
    every_executions: int = 50
    cache_dir: Path = Path(".dnsse/llm-cache")
    # Wait for each answer before the next execution: the campaign is then the same for the same seed
    # and the same answers, however fast the model answers, at the cost of the model's latency.
    wait: bool = False

    def validate(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise BadInput(f"--llm-base-url must be an http:// or https:// URL, got {self.base_url!r}")
        if not self.model.strip():
            raise BadInput("--llm-model must name the model to ask (for example --llm-model llama3)")
        validate_limits(self.timeout_s, self.max_calls, self.concurrency)


def validate_limits(timeout_s: float, max_calls: int, concurrency: int) -> None:
    """BadInput naming the option when a limit is out of range (NaN included)."""
    if not 0 < timeout_s <= 600:
        raise BadInput(f"--llm-timeout must be between 0 and 600 seconds, got {timeout_s}")
    if not 0 <= max_calls <= 10_000:
        raise BadInput(f"--llm-calls must be between 0 and 10000, got {max_calls}")
    if not 1 <= concurrency <= 16:
        raise BadInput(f"--llm-concurrency must be between 1 and 16, got {concurrency}")


def model_settings_json(settings: ModelSettings | None) -> dict | None:
    """The settings as JSON, for a worker process (the key is not part of them: workers read the environment)."""
    if settings is None:
        return None
    record = dataclasses.asdict(settings)
    record["cache_dir"] = str(Path(settings.cache_dir).resolve())
    return record


def model_settings_from_json(record: dict | None) -> ModelSettings | None:
    if record is None:
        return None
    return ModelSettings(**{**record, "cache_dir": Path(record["cache_dir"])})
