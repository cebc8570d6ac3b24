"""A hundred agents run to the end under every strategy, and dnsse's own failures are never passes.

Agents that share one OS thread run as greenlets; a greenlet begins at the
recursion depth of whoever first switches to it, so agents started from
agents once began deeper and deeper, and a hundred threads reached Python's
recursion limit inside dnsse: the executions cut short counted as passes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import PROGRAMS

from dnsse.search.registry import BUILT

TARGET = f"{PROGRAMS / 'many_threads.py'}:main"
# pct cut executions short within 30 before agents were started from the host; the slower strategies get fewer.
BUDGETS = {"random": 30, "pct": 30, "pos": 30, "fuzz": 20, "symbolic": 20, "dfs": 8, "llm": 8, "hybrid": 8}


def _check(
    tmp_path: Path, strategy: str, budget: int, env: dict[str, str], *extra: str
) -> tuple[subprocess.CompletedProcess, Path]:
    report = tmp_path / "report.json"
    result = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", TARGET, "--strategy", strategy, "--seed", "1",
         "--budget", str(budget), "--no-minimize", "--out", str(tmp_path / "out"), "--json", str(report), *extra],
        capture_output=True, text=True, timeout=600, env={**os.environ, **env},
    )
    return result, report


@pytest.mark.parametrize("strategy", BUILT)
def test_every_execution_of_a_hundred_threads_reaches_its_end(tmp_path: Path, strategy: str) -> None:
    ends = tmp_path / "ends.log"
    budget = BUDGETS.get(strategy, 8)
    result, report = _check(tmp_path, strategy, budget, {"MANY_THREADS_LOG": str(ends)})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    executions = json.loads(report.read_text())["executions"]
    assert executions == budget
    assert ends.read_text().count("end\n") == executions


INJECTED = '''
import dnsse.engine.execution as execution

_finished = execution.Execution.agent_finished
_calls = [0]


def agent_finished(self, agent):
    _calls[0] += 1
    if _calls[0] == 150:
        raise RuntimeError("injected failure of the engine")
    return _finished(self, agent)


execution.Execution.agent_finished = agent_finished
'''


@pytest.mark.parametrize("agent_threads", ["greenlets", "os", "worker processes"])
def test_a_failure_of_dnsse_inside_an_execution_is_exit_3_with_its_traceback(tmp_path: Path, agent_threads: str) -> None:
    """The engine fails in an agent's thread in the second execution: the campaign stops, never a pass."""
    (tmp_path / "sitecustomize.py").write_text(INJECTED)
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    if agent_threads == "os":
        env["DNSSE_AGENT_THREADS"] = "os"
    extra = ("--workers", "2") if agent_threads == "worker processes" else ()
    result, _ = _check(tmp_path, "random", 6, env, *extra)
    assert result.returncode == 3, result.stdout + result.stderr
    assert "dnsse failed inside an execution" in result.stderr
    assert "dnsse: internal error:" in result.stderr
    assert "not a bug of the program under test" in result.stderr
    assert "Traceback (most recent call last)" in result.stderr
    assert "RuntimeError: injected failure of the engine" in result.stderr
    assert "no bug found" not in result.stdout + result.stderr


def test_a_call_through_ctypes_in_a_thread_is_not_blamed_on_the_program(tmp_path: Path) -> None:
    """dnsse once failed to look a ctypes function up among builtins, and reported its own TypeError as the program's."""
    report = tmp_path / "report.json"
    result = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", f"{PROGRAMS / 'many_threads.py'}:calls_through_ctypes",
         "--strategy", "random", "--budget", "10", "--out", str(tmp_path / "out"), "--json", str(report)],
        capture_output=True, text=True, timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(report.read_text())["bugs"] == []
