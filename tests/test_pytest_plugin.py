"""@dnsse.test under pytest: a failure shows the story and the replay command, keeps the trace; -x, -k, xdist."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SUITE = Path(__file__).parent / "programs" / "pytest_suite.py"


def run_pytest(directory: Path, *options: str, suite: Path = SUITE) -> subprocess.CompletedProcess:
    """pytest on a copy of the suite, with only our plugin (and those named) loaded, as in a fresh venv."""
    shutil.copy(suite, directory / "test_suite.py")
    environment = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "dnsse.pytest_plugin", "-p", "no:cacheprovider", *options, "test_suite.py"],
        capture_output=True, text=True, timeout=600, cwd=directory, env=environment,
    )


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess]:
    directory = tmp_path_factory.mktemp("suite")
    return directory, run_pytest(directory)


@pytest.mark.slow
def test_each_bug_fails_its_test_and_correct_tests_pass(suite_run: tuple[Path, subprocess.CompletedProcess]) -> None:
    _, ran = suite_run
    assert ran.returncode == 1
    assert re.search(r"3 failed, 1 passed", ran.stdout), ran.stdout[-3000:]
    failed = set(re.findall(r"FAILED test_suite.py::(\w+)", ran.stdout))
    assert failed == {"test_lost_update", "test_barrier_on_one_rank", "test_spec_violation"}


def test_a_failure_shows_the_story_and_the_replay_command(suite_run: tuple[Path, subprocess.CompletedProcess]) -> None:
    _, ran = suite_run
    section = ran.stdout[ran.stdout.index("_ test_lost_update _") :]
    section = section[: section.index("\n_", 10)] if "\n_" in section[10:] else section
    assert "dnsse found a bug in test_lost_update (threads, random, seed 0" in section
    assert "AssertionError: lost update: 1" in section
    assert "how it happens" in section and "✗ step" in section
    assert "seen = counter.count" in section
    assert "replay: dnsse replay .dnsse/pytest/test_suite.test_lost_update/bug-1.json" in section
    assert "dnsse/testing.py" not in section  # dnsse's own frames are left out


def test_the_failing_tests_trace_is_kept_and_replays(suite_run: tuple[Path, subprocess.CompletedProcess]) -> None:
    directory, ran = suite_run
    trace = directory / ".dnsse" / "pytest" / "test_suite.test_barrier_on_one_rank" / "bug-1.json"
    assert trace.is_file()
    assert "test_suite.py::test_barrier_on_one_rank: dnsse replay" in ran.stdout  # the summary section
    replayed = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "replay", str(trace)], capture_output=True, text=True, timeout=600,
        cwd=directory,
    )
    assert replayed.returncode == 1 and "reproduced" in replayed.stdout and "collective_mismatch" in replayed.stdout


def test_spec_of_the_decorator_is_checked(suite_run: tuple[Path, subprocess.CompletedProcess]) -> None:
    _, ran = suite_run
    assert "spec_violation" in ran.stdout and "G !stale" in ran.stdout


def test_a_program_that_kills_its_process_fails_its_test_with_a_crash_and_the_session_goes_on(tmp_path: Path) -> None:
    ran = run_pytest(tmp_path, suite=SUITE.with_name("pytest_crash_suite.py"))
    assert ran.returncode == 1, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert re.search(r"1 failed, 1 passed", ran.stdout), ran.stdout[-3000:]
    assert "FAILED test_suite.py::test_exits_in_one_order" in ran.stdout
    assert "crash" in ran.stdout and "the process exited with status 9" in ran.stdout
    trace = tmp_path / ".dnsse" / "pytest" / "test_suite.test_exits_in_one_order" / "bug-1.json"
    assert f"replay: dnsse replay .dnsse/pytest/{trace.parent.name}/bug-1.json" in ran.stdout
    replayed = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "replay", str(trace)], capture_output=True, text=True, timeout=600,
        cwd=tmp_path,
    )
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "reproduced" in replayed.stdout and "exited with status 9" in replayed.stdout


def test_stop_at_the_first_failure_with_x(tmp_path: Path) -> None:
    ran = run_pytest(tmp_path, "-x")
    assert re.search(r"1 failed in", ran.stdout), ran.stdout[-2000:]


def test_select_with_k(tmp_path: Path) -> None:
    ran = run_pytest(tmp_path, "-k", "locked")
    assert ran.returncode == 0
    assert re.search(r"1 passed, 3 deselected", ran.stdout), ran.stdout[-2000:]


@pytest.mark.slow
def test_runs_under_pytest_xdist(tmp_path: Path) -> None:
    pytest.importorskip("xdist", reason="pytest-xdist is not installed")
    ran = run_pytest(tmp_path, "-p", "xdist.plugin", "-n", "2")
    assert re.search(r"3 failed, 1 passed", ran.stdout), ran.stdout[-3000:]
    assert "dnsse found a bug in test_lost_update" in ran.stdout
    assert "test_suite.py::test_lost_update: dnsse replay" in ran.stdout
    assert (tmp_path / ".dnsse" / "pytest" / "test_suite.test_lost_update" / "bug-1.json").is_file()


def test_the_decorator_takes_the_delay_bound(tmp_path: Path) -> None:
    ran = run_pytest(tmp_path, suite=Path(__file__).parent / "programs" / "pytest_delay_suite.py")
    assert re.search(r"1 failed, 1 passed", ran.stdout), ran.stdout[-3000:]
    assert "FAILED test_suite.py::test_with_any_delay" in ran.stdout


def test_a_misspelt_framework_fails_the_collection_naming_it(tmp_path: Path) -> None:
    ran = run_pytest(tmp_path, suite=SUITE.parent / "pytest_misspelt.py")
    # pytest's status for errors during collection; nothing ran, and the message says what is wrong.
    assert ran.returncode == 2, ran.stdout[-3000:]
    assert "@dnsse.test: unknown framework 'tourch'; use one of auto, torch, ray, threads" in ran.stdout
    assert "1 error" in ran.stdout and "passed" not in ran.stdout.splitlines()[-1]


OPTIONS_SUITE = SUITE.parent / "pytest_options_suite.py"


def test_budget_and_seed_from_the_command_line_and_a_nightly_profile(tmp_path: Path) -> None:
    given = run_pytest(tmp_path, "--dnsse-budget", "7", "--dnsse-seed", "3", suite=OPTIONS_SUITE)
    assert "seed 3," in given.stdout and "of at most 7 executions" in given.stdout, given.stdout[-3000:]
    nightly = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "dnsse.pytest_plugin", "-p", "no:cacheprovider", "test_suite.py",
         "-k", "lost_update"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "DNSSE_PROFILE": "nightly"},
    )
    assert "of at most 1000 executions" in nightly.stdout, nightly.stdout[-3000:]
    bad = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "dnsse.pytest_plugin", "-p", "no:cacheprovider", "test_suite.py"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1", "DNSSE_PROFILE": "weekly"},
    )
    assert bad.returncode == 4 and "DNSSE_PROFILE='weekly' is not a profile" in bad.stderr + bad.stdout


def test_what_dnsse_cannot_check_fails_the_test_with_its_message_not_dnsses_frames(tmp_path: Path) -> None:
    ran = run_pytest(tmp_path, "-k", "raw_thread", suite=OPTIONS_SUITE)
    assert ran.returncode == 1, ran.stdout[-3000:]
    failure = ran.stdout[ran.stdout.index("test_starts_a_raw_thread"):]
    assert "dnsse: _thread.start_new_thread is not under control" in failure, failure[-3000:]
    assert "src/dnsse/" not in failure and "site-packages/dnsse" not in failure


def test_a_test_taking_a_fixture_is_refused_at_collection_saying_what_to_do(tmp_path: Path) -> None:
    ran = run_pytest(tmp_path, suite=SUITE.parent / "pytest_fixture_suite.py")
    assert ran.returncode == 2, ran.stdout[-3000:]
    assert "@dnsse.test: test_wants_a_fixture takes tmp_path, which pytest would pass as fixtures" in ran.stdout
    assert "tempfile.mkdtemp()" in ran.stdout
