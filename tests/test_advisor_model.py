"""The model advisor's contract with an OpenAI-compatible endpoint, against a fake one on loopback."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from dnsse.advisor.model import ModelAdvisor, ModelSettings
from dnsse.advisor.summary import RunSummary, Step
from dnsse.errors import BadInput
from fake_openai import Canned, FakeOpenAI

SECRET = "sk-test-do-not-leak-1234567890"
SOURCE = Path(__file__).parent / "programs" / "search_threads.py"

GOOD = json.dumps(
    {
        "hints": [
            {
                "type": "ordering",
                "sequence": [
                    {"agent": "thread 2", "operation": "attr.store", "location": "app.py:20"},
                    {"agent": "thread 1", "operation": "attr.load", "location": "app.py:12"},
                ],
                "confidence": 0.9,
                "reason": "reverse the race",
            }
        ]
    }
)


def _summary() -> RunSummary:
    summary = RunSummary()
    summary.observe(
        [
            Step("thread 1", "attr.load", (("obj#1.value", "read"),), "app.py:12"),
            Step("thread 2", "attr.store", (("obj#1.value", "write"),), "app.py:20"),
        ]
    )
    return summary


@pytest.fixture
def server():
    fake = FakeOpenAI()
    yield fake
    fake.close()


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("DNSSE_LLM_API_KEY", SECRET)


def _advisor(server: FakeOpenAI, tmp_path: Path, **overrides) -> ModelAdvisor:
    settings = dict(
        base_url=server.base_url, model="canned-model", timeout_s=120.0, max_calls=5, concurrency=1,
        every_executions=1, cache_dir=tmp_path / "cache",
    )
    settings.update(overrides)
    notices: list[str] = []
    advisor = ModelAdvisor(ModelSettings(**settings), SOURCE, on_notice=notices.append)
    advisor.notices = notices  # type: ignore[attr-defined]
    return advisor


def _wait_for_answers(advisor: ModelAdvisor, summary: RunSummary) -> list:
    """Collect until every request in flight has been answered or failed (600 s: a safety net, never reached)."""
    hints: list = []
    deadline = time.monotonic() + 600
    while True:
        hints.extend(advisor._collect(summary))
        if not advisor._pending:
            return hints
        assert time.monotonic() < deadline, "a request to the fake endpoint never ended"
        time.sleep(0.02)  # how often to look, not how long to wait


def test_sends_the_documented_prompt_model_and_key(server, tmp_path):
    server.behaviours.append(Canned(GOOD))
    advisor = _advisor(server, tmp_path)
    summary = _summary()
    assert advisor.advise(summary) == []  # asked in the background; nothing waits for it
    hints = _wait_for_answers(advisor, summary)
    request = server.requests[0]
    assert request["model"] == "canned-model"
    assert request["response_format"] == {"type": "json_object"}
    system, user = (message["content"] for message in request["messages"])
    assert '"hints"' in system and "ordering" in system
    assert "thread 1" in user and "app.py:12" in user
    assert server.headers[0]["authorization"] == f"Bearer {SECRET}"
    assert [hint.describe() for hint in hints] == [
        "thread 2's attr.store at app.py:20 before thread 1's attr.load at app.py:12"
    ]
    assert advisor.stats.calls == 1 and advisor.stats.prompt_tokens == 100 and advisor.stats.completion_tokens == 20


def test_answers_are_cached_without_the_key_and_reused_without_the_model(server, tmp_path):
    server.behaviours.append(Canned(GOOD))
    first = _advisor(server, tmp_path)
    summary = _summary()
    first.advise(summary)
    assert _wait_for_answers(first, summary)
    files = list((tmp_path / "cache").glob("*.json"))
    assert len(files) == 1
    assert SECRET not in files[0].read_text()
    assert json.loads(files[0].read_text())["answer"] == GOOD

    second = _advisor(server, tmp_path)
    hints = second.advise(summary)
    assert len(hints) == 1 and second.stats.cache_hits == 1 and second.stats.calls == 0
    assert len(server.requests) == 1


def test_malformed_json_is_counted_and_yields_nothing(server, tmp_path):
    server.behaviours.append(Canned("this is not json {"))
    advisor = _advisor(server, tmp_path)
    summary = _summary()
    advisor.advise(summary)
    assert _wait_for_answers(advisor, summary) == []
    assert advisor.stats.malformed == 1 and advisor.stats.received == 0


def test_hints_naming_unknown_agents_or_lines_are_discarded(server, tmp_path):
    bad = {
        "hints": [
            {"type": "ordering", "sequence": [{"agent": "rank 7"}, {"agent": "thread 1"}], "confidence": 0.5},
            {
                "type": "ordering",
                "sequence": [{"agent": "thread 2", "location": "app.py:999"}, {"agent": "thread 1"}],
                "confidence": 0.5,
            },
            {"type": "ordering", "sequence": [{"agent": "thread 2"}, {"agent": "thread 1"}], "confidence": 7},
            {"type": "shell", "command": "rm -rf /", "confidence": 0.5},
            {"type": "ordering", "sequence": [{"agent": "thread 2"}, {"agent": "thread 1"}], "confidence": 0.4},
        ]
    }
    server.behaviours.append(Canned(json.dumps(bad)))
    advisor = _advisor(server, tmp_path)
    summary = _summary()
    advisor.advise(summary)
    hints = _wait_for_answers(advisor, summary)
    assert [hint.describe() for hint in hints] == ["thread 2's step before thread 1's step"]
    assert advisor.stats.discarded == 4
    reasons = " | ".join(advisor.stats.discard_reasons)
    assert "no agent named 'rank 7'" in reasons and "app.py:999" in reasons
    assert "confidence" in reasons and "unknown type 'shell'" in reasons


def test_a_request_runs_in_the_background_while_the_endpoint_has_not_answered(server, tmp_path):
    answer = threading.Event()
    server.behaviours.append(Canned(GOOD, hold=answer))
    advisor = _advisor(server, tmp_path)
    summary = _summary()
    try:
        assert advisor.advise(summary) == []
        # advise returned while the endpoint still holds its answer back: nothing waited for it.
        assert [pending.done for pending in advisor._pending] == [False]
    finally:
        answer.set()
    hints = _wait_for_answers(advisor, summary)
    assert len(hints) == 1 and advisor.stats.calls == 1 and advisor.stats.failures == 0


def test_waiting_for_answers_takes_each_answer_in_the_call_that_asked_and_failures_alike(server, tmp_path):
    server.behaviours.extend([Canned(GOOD), Canned(status=500), Canned(status=500)])
    advisor = _advisor(server, tmp_path, wait=True, every_executions=100)
    summary = _summary()
    hints = advisor.advise(summary)
    assert [hint.describe() for hint in hints] == [
        "thread 2's attr.store at app.py:20 before thread 1's attr.load at app.py:12"
    ]
    assert advisor._pending == [] and advisor.stats.calls == 1 and len(server.requests) == 1
    summary.executions += 1
    assert advisor.advise(summary) == []  # not yet time to ask again
    assert len(server.requests) == 1
    summary.executions += 100
    assert advisor.advise(summary) == [] and advisor.stats.failures == 1
    # A failure is asked again at once, in the next call, and the second in a row gives up.
    assert advisor.advise(summary) == [] and advisor.stats.failures == 2 and advisor.stats.gave_up
    assert advisor.advise(summary) == [] and len(server.requests) == 3
    assert len(advisor.notices) == 1


def test_a_slow_endpoint_times_out_without_stalling_and_is_given_up(server, tmp_path):
    never_in_time = threading.Event()  # released only once the test is over
    server.behaviours.extend([Canned(GOOD, hold=never_in_time), Canned(GOOD, hold=never_in_time)])
    advisor = _advisor(server, tmp_path, timeout_s=0.3)
    summary = _summary()
    try:
        advisor.advise(summary)
        _wait_for_answers(advisor, summary)
        summary.executions += 1
        advisor.advise(summary)
        _wait_for_answers(advisor, summary)
    finally:
        never_in_time.set()
    assert advisor.stats.failures == 2
    assert advisor.stats.gave_up is not None and "Timeout" in advisor.stats.gave_up
    assert len(advisor.notices) == 1 and "goes on without it" in advisor.notices[0]
    summary.executions += 1
    advisor.advise(summary)
    assert advisor.stats.calls == 2  # no more requests once given up


@pytest.mark.parametrize("canned", [Canned(status=500), Canned(drop=True)], ids=["http-error", "dropped"])
def test_http_errors_and_dropped_connections_are_failures_without_the_key(server, tmp_path, canned):
    server.behaviours.extend([canned, canned])
    advisor = _advisor(server, tmp_path)
    summary = _summary()
    for _ in range(2):
        advisor.advise(summary)
        _wait_for_answers(advisor, summary)
        summary.executions += 1
    assert advisor.stats.failures == 2
    assert SECRET not in json.dumps(advisor.stats.to_json()) and SECRET not in advisor.notices[0]


def test_the_call_budget_is_respected(server, tmp_path):
    server.behaviours.extend([Canned(GOOD)] * 5)
    advisor = _advisor(server, tmp_path, max_calls=2)
    summary = _summary()
    for _ in range(6):
        advisor.advise(summary)
        _wait_for_answers(advisor, summary)
        summary.executions += 1
    assert len(server.requests) == 2 and advisor.stats.calls == 2


def test_json_mode_refused_by_the_server_falls_back_to_the_stated_schema(server, tmp_path):
    server.behaviours.extend([Canned(status=400), Canned(GOOD)])
    advisor = _advisor(server, tmp_path)
    summary = _summary()
    advisor.advise(summary)
    hints = _wait_for_answers(advisor, summary)
    assert len(hints) == 1
    assert "response_format" in server.requests[0] and "response_format" not in server.requests[1]


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"base_url": "ftp://x"}, "--llm-base-url"),
        ({"timeout_s": float("nan")}, "--llm-timeout"),
        ({"concurrency": 0}, "--llm-concurrency"),
        ({"max_calls": -1}, "--llm-calls"),
    ],
)
def test_bad_settings_are_bad_input(tmp_path, overrides, message):
    settings = dict(base_url="http://127.0.0.1:9/v1", model="m", cache_dir=tmp_path)
    settings.update(overrides)
    with pytest.raises(BadInput, match=message):
        ModelSettings(**settings).validate()


def test_the_counts_of_several_workers_add_up_whatever_fields_the_stats_have() -> None:
    from dnsse.advisor.stats import AdvisorStats, merge_stats_json

    first = AdvisorStats(calls=2, tried=3, useful=1, latency_s=0.5, prompt_tokens=10)
    first.discard(["hint 1: no agent named 'x'"])
    first.found_bugs.append("crash: crash PS#1 after its call #1 of push")
    second = AdvisorStats(calls=1, tried=1, useful=1, gave_up="the endpoint failed twice")
    second.discard(["hint 2: no agent named 'y'"])
    merged = merge_stats_json([first.to_json(), second.to_json()])
    assert set(merged) == set(first.to_json())
    assert (merged["calls"], merged["tried"], merged["useful"], merged["prompt_tokens"]) == (3, 4, 2, 10)
    assert merged["precision"] == 0.5 and merged["latency_s"] == 0.5
    assert merged["discarded"] == 2 and merged["discarded_by_reason"] == {"no agent named _": 2}
    assert merged["found_bugs"] == ["crash: crash PS#1 after its call #1 of push"]
    assert merged["gave_up"] == "the endpoint failed twice"
