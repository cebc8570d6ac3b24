"""The advisor backed by a language model behind any OpenAI-compatible endpoint.

vLLM, llama.cpp's server, ollama and hosted APIs all speak the chat
completions protocol, which the ``openai`` package implements. Requests run
in the background, at most ``concurrency`` at a time and ``max_calls`` in all,
each under ``timeout_s``, so a slow or dead endpoint never stalls the search:
the campaign keeps running executions and picks answers up when they arrive.
With ``wait`` set, each request is answered before the next execution
instead: slower, but the campaign no longer depends on the model's speed.
After ``FAILURES_BEFORE_GIVING_UP`` failures in a row the advisor stops asking
and says so once. Answers are cached on disk by request hash, so the same
campaign can run again without the model.

The API key is read from the environment and handed to the HTTP client only;
it is never part of a cache file, a statistic, a message or a report, and
error texts are scrubbed of it before anyone sees them.
"""

from __future__ import annotations

import _thread
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from dnsse.advisor.cache import AnswerCache, request_key
from dnsse.advisor.hints import Hint, parse_hints
from dnsse.advisor.prompt import build_messages
from dnsse.advisor.settings import (  # noqa: F401 - the settings are named from here too
    KEY_VARIABLES,
    ModelSettings,
    model_settings_from_json,
    model_settings_json,
    validate_limits,
)
from dnsse.advisor.stats import AdvisorStats
from dnsse.advisor.summary import RunSummary
from dnsse.errors import BadInput

FAILURES_BEFORE_GIVING_UP = 2
# Bound read before the campaign's clocks are replaced: latency is real time.
_real_clock = time.perf_counter


@dataclass
class _Pending:
    key: str
    started: float
    answer: str | None = None
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    done: bool = False


@dataclass
class ModelAdvisor:
    settings: ModelSettings
    source_path: Path
    on_notice: Callable[[str], None] = lambda message: None
    stats: AdvisorStats = field(default_factory=AdvisorStats)
    name: str = "model"

    def __post_init__(self) -> None:
        self.settings.validate()
        self._key = next((os.environ[name] for name in KEY_VARIABLES if os.environ.get(name)), None)
        self._cache = AnswerCache(self.settings.cache_dir)
        self._pending: list[_Pending] = []
        self._lock = _thread.allocate_lock()
        self._asked_at: int | None = None
        self._failures_in_a_row = 0
        self._gave_up = False
        self._json_mode = True
        self._client = self._make_client()

    def _make_client(self):  # type: ignore[no-untyped-def]
        try:
            from openai import OpenAI
        except ImportError as error:  # pragma: no cover - openai is a dependency
            raise BadInput(f"the LLM advisor needs the openai package: {error}") from None
        # max_retries=0: our own failure count decides; the SDK's retries would hide a dead endpoint.
        return OpenAI(
            base_url=self.settings.base_url,
            api_key=self._key or "not-needed",
            timeout=self.settings.timeout_s,
            max_retries=0,
        )

    def advise(self, summary: RunSummary) -> list[Hint]:
        """Hints of the answers that arrived since the last call; may start a new request."""
        hints = self._collect(summary)
        if self._should_ask(summary):
            self._ask(summary, hints)
            if self.settings.wait:
                hints.extend(self._collect(summary))
        return hints

    def close(self) -> None:
        """Answers still in flight are abandoned; their threads end with their timeouts."""
        with self._lock:
            for pending in self._pending:
                if not pending.done:
                    self.stats.abandoned += 1
            self._pending.clear()

    def _should_ask(self, summary: RunSummary) -> bool:
        # Before any run there is nothing to name: every hint would be refused.
        if summary.executions == 0 or self._gave_up or self.stats.calls + self.stats.cache_hits >= self.settings.max_calls:
            return False
        if len(self._pending) >= self.settings.concurrency:
            return False
        return self._asked_at is None or summary.executions - self._asked_at >= self.settings.every_executions

    def _ask(self, summary: RunSummary, hints: list[Hint]) -> None:
        self._asked_at = summary.executions
        messages = build_messages(summary, self.source_path)
        key = request_key(self.settings.model, messages)
        cached = self._cache.get(key)
        if cached is not None:
            self.stats.cache_hits += 1
            hints.extend(self._parse(cached, summary))
            return
        pending = _Pending(key, _real_clock())
        self.stats.calls += 1
        self._pending.append(pending)
        if self.settings.wait:
            self._request(pending, messages)  # bounded by the request's timeout
        else:
            _thread.start_new_thread(self._request, (pending, messages))

    def _request(self, pending: _Pending, messages: list[dict[str, str]]) -> None:
        """Runs on a plain thread of its own, never under the campaign's control."""
        try:
            pending.answer, pending.prompt_tokens, pending.completion_tokens = self._complete(messages)
            # Cached as soon as it arrives: an answer the campaign ended too early to use still serves the next one.
            self._cache.put(pending.key, self.settings.model, pending.answer)
        except Exception as error:  # noqa: BLE001 - any failure of the endpoint is the same news
            pending.error = self._scrub(f"{type(error).__name__}: {error}")
        with self._lock:
            pending.done = True

    def _complete(self, messages: list[dict[str, str]]) -> tuple[str, int, int]:
        extra = {"response_format": {"type": "json_object"}} if self._json_mode else {}
        try:
            response = self._client.chat.completions.create(
                model=self.settings.model, messages=messages, temperature=0, **extra
            )
        except Exception as error:  # noqa: BLE001
            # Some servers refuse JSON mode; the prompt states the schema anyway.
            if not self._json_mode or getattr(error, "status_code", None) != 400:
                raise
            self._json_mode = False
            response = self._client.chat.completions.create(
                model=self.settings.model, messages=messages, temperature=0
            )
        text = response.choices[0].message.content if response.choices else None
        if not isinstance(text, str):
            raise ValueError("the answer has no text content")
        usage = response.usage
        return text, getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0

    def _collect(self, summary: RunSummary) -> list[Hint]:
        with self._lock:
            finished = [pending for pending in self._pending if pending.done]
            self._pending = [pending for pending in self._pending if not pending.done]
        hints: list[Hint] = []
        for pending in finished:
            self.stats.latency_s += _real_clock() - pending.started
            if pending.error is not None:
                self._failed(pending.error)
                continue
            assert pending.answer is not None
            self._failures_in_a_row = 0
            self.stats.prompt_tokens += pending.prompt_tokens
            self.stats.completion_tokens += pending.completion_tokens
            hints.extend(self._parse(pending.answer, summary))
        return hints

    def _parse(self, answer: str, summary: RunSummary) -> list[Hint]:
        try:
            raw = json.loads(_strip_fences(answer))
        except ValueError:
            self.stats.malformed += 1
            return []
        parsed = parse_hints(raw, summary, source=self.name)
        self.stats.received += len(parsed.hints)
        self.stats.discard(parsed.discarded)
        return parsed.hints

    def _failed(self, error: str) -> None:
        self.stats.failures += 1
        self._failures_in_a_row += 1
        # Ask again at once: one failure may be a blip, the next one in a row ends the asking.
        self._asked_at = None
        if self._failures_in_a_row >= FAILURES_BEFORE_GIVING_UP and not self._gave_up:
            self._gave_up = True
            self.stats.gave_up = error
            self.on_notice(
                f"the model at {self.settings.base_url} failed {self._failures_in_a_row} times in a row "
                f"({error}); the search goes on without it"
            )

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text


def _strip_fences(text: str) -> str:
    """Models often wrap JSON in a Markdown code fence despite being asked not to."""
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0]
    return stripped
