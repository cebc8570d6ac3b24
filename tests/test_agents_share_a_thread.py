"""Agents of a threads or Ray program run as greenlets of one OS thread, and behave as on threads of their own.

Everything Python keeps per thread stays per agent (thread-locals, RLock
owners, asyncio's running loop, tracers), the same schedules are offered and
the same bugs found either way, and a trace recorded one way replays the
other way. ``DNSSE_AGENT_THREADS=os`` gives every agent an OS thread.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dnsse.engine import thread_state

PROGRAMS = Path(__file__).parent / "programs"
PROGRAM = PROGRAMS / "thread_state.py"
MODES = {"greenlets": "", "os threads": "os"}


def run_cli(mode: str, *arguments: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DNSSE_AGENT_THREADS": MODES[mode]}
    return subprocess.run(
        [sys.executable, "-m", "dnsse.cli", *arguments], capture_output=True, text=True, timeout=600, env=env
    )


def check(
    tmp_path: Path, mode: str, function: str, *options: str, program: Path = PROGRAM
) -> tuple[subprocess.CompletedProcess, dict]:
    report = tmp_path / f"{mode}.json"
    done = run_cli(
        mode, "check", f"{program}:{function}", "--out", str(tmp_path / mode), "--json", str(report),
        "--no-minimize", *options,
    )
    return done, json.loads(report.read_text())


@pytest.mark.skipif(not thread_state.available(), reason="greenlet agents need CPython 3.11; other Pythons keep OS threads")
def test_the_threads_of_a_program_share_one_os_thread_unless_told_otherwise(tmp_path: Path) -> None:
    done, _ = check(tmp_path, "greenlets", "one_os_thread", "--strategy", "random", "--budget", "5")
    assert done.returncode == 0, done.stdout + done.stderr
    done, report = check(tmp_path, "os threads", "one_os_thread", "--strategy", "random", "--budget", "5")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "3 OS threads" in report["bugs"][0]["message"]


@pytest.mark.skipif(thread_state.available(), reason="this Python runs agents as greenlets")
def test_other_pythons_keep_an_os_thread_per_agent(tmp_path: Path) -> None:
    # Where the thread's tracing depth cannot be swapped (3.12, 3.13), the default falls back to OS threads.
    done, report = check(tmp_path, "greenlets", "one_os_thread", "--strategy", "random", "--budget", "5")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "3 OS threads" in report["bugs"][0]["message"]


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("function", ["thread_locals", "rlock_owners", "running_loops"])
def test_per_thread_state_stays_per_thread(tmp_path: Path, mode: str, function: str) -> None:
    done, report = check(tmp_path, mode, function, "--strategy", "random", "--budget", "40")
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["bugs"] == [] and report["executions"] == 40


@pytest.mark.torch
def test_a_program_that_uses_torch_keeps_os_threads(tmp_path: Path) -> None:
    done, report = check(
        tmp_path, "greenlets", "torch_grad_mode", "--strategy", "random", "--budget", "20",
        program=PROGRAMS / "thread_state_torch.py",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert report["bugs"] == []


@pytest.mark.parametrize("strategy", ["random", "dfs"])
def test_the_same_schedules_and_bugs_either_way_and_traces_replay_across(tmp_path: Path, strategy: str) -> None:
    found = {}
    for mode in MODES:
        done, report = check(tmp_path, mode, "racy_counter", "--strategy", strategy, "--seed", "3")
        assert done.returncode == 1, done.stdout + done.stderr
        [bug] = report["bugs"]
        assert bug["kind"] == "exception" and "count is 1" in bug["message"]
        trace = json.loads(Path(bug["trace"]).read_text())
        found[mode] = (report["executions"], bug["execution"], trace["choices"], Path(bug["trace"]))
    greenlets, threads = found["greenlets"], found["os threads"]
    assert greenlets[:3] == threads[:3]
    for mode, (_, _, _, trace) in found.items():
        other = "os threads" if mode == "greenlets" else "greenlets"
        replayed = run_cli(other, "replay", str(trace))
        assert replayed.returncode == 1, replayed.stdout + replayed.stderr
        assert "count is 1" in replayed.stdout


def test_coverage_is_the_same_either_way(tmp_path: Path) -> None:
    reports = [check(tmp_path, mode, "racy_counter", "--strategy", "fuzz", "--budget", "30", "--keep-going")[1]
               for mode in MODES]
    assert reports[0]["coverage"] == reports[1]["coverage"]
    assert reports[0]["coverage"]["branches_covered"] > 0
    assert [bug["execution"] for bug in reports[0]["bugs"]] == [bug["execution"] for bug in reports[1]["bugs"]]


@pytest.mark.parametrize(
    "target", ["ray_param_server.py:lost_update", "ray_threaded.py:oversold", "ray_mutual.py:deadlock"]
)
def test_ray_programs_find_the_same_bugs_either_way(tmp_path: Path, target: str) -> None:
    """Async actors (a running loop each), threaded actors and nested calls, on greenlets or OS threads."""
    program, function = target.split(":")
    found = {}
    for mode in MODES:
        done, report = check(tmp_path, mode, function, "--strategy", "random", "--seed", "1", program=PROGRAMS / program)
        assert done.returncode == 1, done.stdout + done.stderr
        [bug] = report["bugs"]
        trace = json.loads(Path(bug["trace"]).read_text())
        found[mode] = (bug["kind"], bug["message"], bug["execution"], trace["choices"], Path(bug["trace"]))
    assert found["greenlets"][:4] == found["os threads"][:4]
    replayed = run_cli("os threads", "replay", str(found["greenlets"][4]))
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
