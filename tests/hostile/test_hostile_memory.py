"""A target that allocates without bound is stopped by the memory limit: a crash bug, and the campaign goes on.

Each campaign here runs under --memory-limit 256M, so no test takes more than that from the machine.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile_cli import output, run_cli, target

HOG = target("memory.py:hog")


def test_memory_exhaustion_is_a_crash_bug_that_replays_under_the_same_limit(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    found = run_cli(
        "check", HOG, "--memory-limit", "256M", "--keep-going", "--budget", "10", "--strategy", "random",
        "--out", str(tmp_path / "traces"), "--json", str(report),
    )
    assert found.returncode == 1, output(found)
    data = json.loads(report.read_text())
    assert data["executions"] == 10
    [bug] = data["bugs"]
    assert bug["kind"] == "crash"
    assert bug["message"].startswith("memory exhausted") and "256 MiB" in bug["message"]
    assert any(line.startswith("MemoryError in Thread-") for line in bug["details"])
    trace = json.loads(Path(bug["trace"]).read_text())
    assert trace["memory_limit"] == 256 * 1024 * 1024
    replayed = run_cli("replay", bug["trace"])
    assert replayed.returncode == 1, output(replayed)
    assert "reproduced" in replayed.stdout and "memory exhausted" in replayed.stdout


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("1K", "--memory-limit must be at least 128 MiB"),
        ("lots", "is not a size"),
        ("100000T", "is more than this machine's memory"),
    ],
)
def test_a_memory_limit_out_of_range_is_bad_input(value: str, message: str, tmp_path: Path) -> None:
    result = run_cli("check", HOG, "--memory-limit", value, "--out", str(tmp_path))
    assert result.returncode == 2, output(result)
    assert message in result.stderr and "Traceback" not in result.stderr


def test_a_trace_with_a_bad_memory_limit_is_malformed(tmp_path: Path) -> None:
    found = run_cli("check", HOG, "--memory-limit", "256M", "--strategy", "random", "--out", str(tmp_path))
    assert found.returncode == 1, output(found)
    trace = tmp_path / "bug-1.json"
    data = json.loads(trace.read_text())
    data["memory_limit"] = "much"
    trace.write_text(json.dumps(data))
    replayed = run_cli("replay", str(trace))
    assert replayed.returncode == 2, output(replayed)
    assert "the field 'memory_limit' must be null or a number of bytes" in replayed.stderr
