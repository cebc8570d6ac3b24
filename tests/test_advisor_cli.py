"""``--strategy llm`` through the command line: offline, with a model on loopback, and when the model fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fake_openai import Canned, FakeOpenAI

PROGRAMS = Path(__file__).parent / "programs"
TARGET = f"{PROGRAMS}/advisor_window.py:main"
SECRET = "sk-test-never-written-0987654321"
# The ordering that breaks advisor_window: the reader's check between the trainer's two writes.
RIGHT_ORDER = json.dumps(
    {
        "hints": [
            {
                "type": "ordering",
                "sequence": [
                    {"agent": "Thread-1 (trainer)", "operation": "attr.store", "location": "advisor_window.py:25"},
                    {"agent": "Thread-2 (reader)", "operation": "attr.load", "location": "advisor_window.py:32"},
                    {"agent": "Thread-1 (trainer)", "operation": "attr.store", "location": "advisor_window.py:26"},
                ],
                "confidence": 1.0,
                "reason": "the reader's check lands between the two writes of phase",
            }
        ]
    }
)
USELESS = json.dumps(
    {
        "hints": [
            {"type": "ordering", "sequence": [{"agent": "rank 9"}, {"agent": "rank 3"}], "confidence": 0.9},
            {"type": "ordering", "sequence": [{"agent": "Thread-2 (reader)", "location": "advisor_window.py:999"},
                                              {"agent": "Thread-1 (trainer)"}], "confidence": 0.9},
            {"type": "input", "name": "tokens", "value": 3, "confidence": 0.5},
            {"type": "exec", "code": "import os; os.system('true')", "confidence": 1},
        ]
    }
)


def run_cli(*arguments: str, key: bool = True) -> subprocess.CompletedProcess:
    environment = {name: value for name, value in os.environ.items() if name not in ("OPENAI_API_KEY", "DNSSE_LLM_API_KEY")}
    if key:
        environment["DNSSE_LLM_API_KEY"] = SECRET
    return subprocess.run(
        [sys.executable, "-m", "dnsse.cli", *arguments],
        capture_output=True, text=True, timeout=600, env=environment,
    )


def check(tmp_path: Path, name: str, *extra: str, strategy: str = "llm", seed: int = 0) -> tuple[subprocess.CompletedProcess, dict]:
    report = tmp_path / f"{name}.json"
    result = run_cli(
        "check", TARGET, "--strategy", strategy, "--seed", str(seed), "--budget", "400", "--no-minimize",
        "--out", str(tmp_path / name), "--json", str(report), *extra,
    )
    assert result.returncode in (0, 1), result.stdout + result.stderr
    return result, json.loads(report.read_text())


def with_model(server: FakeOpenAI, tmp_path: Path, *extra: str) -> tuple[str, ...]:
    return ("--llm-base-url", server.base_url, "--llm-model", "canned-7b", "--llm-cache", str(tmp_path / "cache"), *extra)


def assert_key_written_nowhere(tmp_path: Path, *outputs: subprocess.CompletedProcess) -> None:
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(errors="replace"), path
    for output in outputs:
        assert SECRET not in output.stdout + output.stderr


@pytest.fixture
def server():
    fake = FakeOpenAI()
    yield fake
    fake.close()


@pytest.fixture(scope="module")
def random_executions(tmp_path_factory: pytest.TempPathFactory) -> int:
    result, report = check(tmp_path_factory.mktemp("random"), "random", strategy="random")
    assert result.returncode == 1, "random finds the bug of advisor_window within the budget"
    return report["executions"]


def test_the_offline_advisor_finds_the_window_sooner_than_random(tmp_path: Path, random_executions: int) -> None:
    result, report = check(tmp_path, "offline", "--verbose")
    assert result.returncode == 1
    assert report["strategy"] == "llm" and report["bugs"][0]["kind"] == "exception"
    assert "half-applied update" in report["bugs"][0]["message"]
    assert report["executions"] < random_executions
    offline = report["advisor"]["offline"]
    assert offline["tried"] >= 1 and offline["useful"] >= 1 and offline["calls"] == 0
    assert "model" not in report["advisor"]
    assert "advisor offline:" in result.stdout and "useful" in result.stdout


def test_hybrid_runs_the_advisor_as_one_of_its_engines(tmp_path: Path) -> None:
    result, report = check(tmp_path, "hybrid", "--verbose", strategy="hybrid")
    assert result.returncode == 1
    assert set(report["engines"]) == {"random", "race-directed", "pos", "pct-shallow", "symbolic", "fuzz", "pct", "advisor"}
    assert sum(engine["executions"] for engine in report["engines"].values()) == report["executions"]
    assert report["advisor"]["offline"]["tried"] == report["engines"]["advisor"]["executions"]
    assert "  advisor: " in result.stdout and "advisor offline:" in result.stdout


def test_a_model_naming_the_right_order_finds_the_bug_sooner_than_random_and_replays_from_its_cache(
    server: FakeOpenAI, tmp_path: Path, random_executions: int
) -> None:
    server.behaviours.append(Canned(RIGHT_ORDER))
    # --llm-wait: the answer is taken before the second execution, however long the model takes.
    live, report = check(tmp_path, "live", *with_model(server, tmp_path, "--llm-wait"))
    assert live.returncode == 1
    assert report["executions"] == 2 < random_executions
    request = server.requests[0]
    assert request["model"] == "canned-7b"
    assert "advisor_window.py" in request["messages"][1]["content"]
    assert server.headers[0]["authorization"] == f"Bearer {SECRET}"
    assert report["advisor"]["model"]["calls"] >= 1
    # Again without the endpoint: the first request of the same campaign is answered from the cache,
    # before the second execution, so the model's hint runs first.
    server.close()
    cached, report = check(tmp_path, "cached", *with_model(server, tmp_path), "-v")
    assert cached.returncode == 1
    model = report["advisor"]["model"]
    assert model["cache_hits"] == 1 and model["calls"] == 0
    assert model["received"] == 1 and model["tried"] == 1 and model["useful"] == 1
    assert report["executions"] == 2 < random_executions
    assert "advisor model:" in cached.stdout and "1 cache hits" in cached.stdout
    assert_key_written_nowhere(tmp_path, live, cached)


def test_a_useless_answer_is_discarded_and_the_bug_is_still_found(server: FakeOpenAI, tmp_path: Path) -> None:
    server.behaviours.extend([Canned(USELESS), Canned("this is not JSON {")])
    # Asked after the 1st and the 51st execution, each answer waited for.
    result, report = check(
        tmp_path, "useless", *with_model(server, tmp_path, "--llm-wait"), "--keep-going", "--budget", "60"
    )
    assert result.returncode == 1 and report["bugs"][0]["kind"] == "exception"
    model = report["advisor"]["model"]
    assert model["calls"] == 2 and model["failures"] == 0
    assert model["received"] == 0 and model["tried"] == 0 and model["malformed"] == 1
    assert model["discarded"] == 4
    assert model["discarded_by_reason"] == {
        "no agent named _": 1,
        "_ never reaches a scheduling point at _, and it is no line of code": 1,
        "no input named _": 1,
        "unknown type _ (ordering, delay, input or fault)": 1,
    }
    assert report["advisor"]["offline"]["useful"] >= 1
    assert_key_written_nowhere(tmp_path, result)


@pytest.mark.parametrize("failure", [Canned(status=500), Canned(drop=True)], ids=["http-500", "dropped"])
def test_a_failing_endpoint_is_given_up_once_and_the_search_goes_on(
    server: FakeOpenAI, tmp_path: Path, failure: Canned
) -> None:
    server.behaviours.extend([failure] * 5)
    result, report = check(
        tmp_path, "failing", *with_model(server, tmp_path, "--llm-wait"), "--keep-going", "--budget", "60"
    )
    assert result.returncode == 1
    assert report["executions"] == 60
    model = report["advisor"]["model"]
    assert model["failures"] == 2 and model["gave_up"]
    assert result.stderr.count("the search goes on without it") == 1
    assert len(server.requests) == 2
    assert_key_written_nowhere(tmp_path, result)


def test_the_call_budget_bounds_the_requests(server: FakeOpenAI, tmp_path: Path) -> None:
    server.behaviours.extend([Canned(USELESS)] * 5)
    result, report = check(
        tmp_path, "budget", *with_model(server, tmp_path, "--llm-calls", "1", "--llm-wait"),
        "--keep-going", "--budget", "120",
    )
    assert report["advisor"]["model"]["calls"] == 1
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--llm-model", "m"], "--llm-base-url and --llm-model go together"),
        (["--llm-base-url", "ftp://host/v1", "--llm-model", "m"], "must be an http:// or https:// URL"),
        (["--llm-base-url", "http://127.0.0.1:9/v1", "--llm-model", " "], "--llm-model must name"),
        (["--llm-timeout", "0"], "--llm-timeout must be between"),
        (["--llm-timeout", "nan"], "--llm-timeout must be between"),
        (["--llm-calls", "-1"], "--llm-calls must be between"),
        (["--llm-concurrency", "0"], "--llm-concurrency must be between"),
    ],
)
def test_bad_advisor_options_exit_two_with_a_message(tmp_path: Path, options: list[str], message: str) -> None:
    result = run_cli("check", TARGET, "--strategy", "llm", "--out", str(tmp_path), *options)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr


def test_two_workers_add_up_their_advisors_and_share_the_call_budget(server: FakeOpenAI, tmp_path: Path) -> None:
    server.behaviours.extend([Canned(RIGHT_ORDER)] * 4)
    result, report = check(
        tmp_path, "workers", *with_model(server, tmp_path, "--llm-calls", "2", "--llm-wait"), "--workers", "2",
        "--keep-going", "--budget", "40", "--verbose",
    )
    assert result.returncode == 1
    model, offline = report["advisor"]["model"], report["advisor"]["offline"]
    # Each worker asked once with its half of the budget (the same question may be answered from the
    # cache the other one filled), and both counts reached the report.
    assert model["calls"] + model["cache_hits"] == 2
    assert model["calls"] == len(server.requests) >= 1
    assert server.requests[0]["model"] == "canned-7b"
    assert model["received"] >= 1 and offline["received"] >= 1 and offline["tried"] >= 1
    assert "advisor model:" in result.stdout and f"{model['calls']} calls" in result.stdout and "advisor offline:" in result.stdout
    assert_key_written_nowhere(tmp_path, result)


def test_two_workers_report_hybrids_engines_added_up(tmp_path: Path) -> None:
    result, report = check(
        tmp_path, "hybrid", "--workers", "2", "--keep-going", "--budget", "60", "--verbose", strategy="hybrid"
    )
    assert result.returncode == 1
    assert set(report["engines"]) == {"random", "race-directed", "pos", "pct-shallow", "symbolic", "fuzz", "pct", "advisor"}
    assert sum(engine["executions"] for engine in report["engines"].values()) == report["executions"] == 60
    assert report["advisor"]["offline"]["tried"] == report["engines"]["advisor"]["executions"]
    assert "  fuzz: " in result.stdout and "advisor offline:" in result.stdout
