"""The command line contract (DESIGN §3): exit codes, messages, traces, replay, --json."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dnsse.cli import main

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = Path(__file__).parent / "programs"
EXAMPLE = ROOT / "examples" / "loss_scaling.py"


def run_cli(*arguments: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """The real command, in a child process, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "dnsse.cli", *arguments], capture_output=True, text=True, cwd=cwd, timeout=600
    )


@pytest.mark.torch
def test_bundled_example_bug_is_found_and_its_replay_reproduces_it(tmp_path: Path) -> None:
    found = run_cli("check", f"{EXAMPLE}:main", "--out", str(tmp_path / "traces"), "--json", str(tmp_path / "r.json"))
    assert found.returncode == 1, found.stdout + found.stderr
    assert "async all_reduce buffer read before Work.wait() on rank" in found.stdout
    assert "loss_scaling.py:36 (issued at " in found.stdout and "loss_scaling.py:35)" in found.stdout
    trace = tmp_path / "traces" / "bug-1.json"
    assert f"dnsse replay {trace}" in found.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["framework"] == "torch" and report["strategy"] == "hybrid"
    assert report["bugs"][0]["kind"] == "exception"
    assert report["bugs"][0]["trace"] == str(trace)
    assert report["executions"] == report["bugs"][0]["execution"]
    replayed = run_cli("replay", str(trace))
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "reproduced" in replayed.stdout and "buffer read before Work.wait()" in replayed.stdout


@pytest.mark.torch
def test_a_correct_program_exits_zero_with_no_trace(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    status = main(["check", f"{PROGRAMS}/torch_values.py:checked", "--budget", "30", "--out", str(tmp_path)])
    assert status == 0
    assert "no bug found" in capsys.readouterr().out
    assert not list(tmp_path.glob("bug-*.json"))


def test_a_torch_program_without_torch_installed_is_bad_input(tmp_path: Path) -> None:
    # A torch that fails to import, as on a Python with no torch build: every child process sees it too.
    (tmp_path / "torch.py").write_text("raise ImportError(\"No module named 'torch'\")\n", encoding="utf-8")
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    found = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", f"{EXAMPLE}:main", "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": path},
    )
    assert found.returncode == 2, found.stderr
    assert "torch is not installed for this Python" in found.stderr and "Traceback" not in found.stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_lock_order_deadlock_names_both_threads(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    status = main(["check", f"{PROGRAMS}/threads_lock_order.py:main", "--out", str(tmp_path), "--strategy", "random"])
    out = capsys.readouterr().out
    assert status == 1
    assert "deadlock" in out and "Thread-1" in out and "Thread-2" in out


def test_the_same_seed_gives_the_same_campaign(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    target = f"{PROGRAMS}/threads_counter.py:unlocked"
    for run in ("a", "b"):
        assert main(["check", target, "--seed", "7", "--strategy", "random", "--out", str(tmp_path / run)]) == 1
    first = json.loads((tmp_path / "a" / "bug-1.json").read_text())
    second = json.loads((tmp_path / "b" / "bug-1.json").read_text())
    assert first["execution"] == second["execution"]
    assert first["choices"] == second["choices"]


def test_keep_going_writes_one_trace_per_distinct_bug(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    report = tmp_path / "report.json"
    status = main(
        ["check", f"{PROGRAMS}/threads_counter.py:unlocked", "--keep-going", "--budget", "40",
         "--out", str(tmp_path), "--json", str(report), "--strategy", "random"]
    )
    assert status == 1
    data = json.loads(report.read_text())
    assert data["executions"] == 40
    messages = [bug["message"] for bug in data["bugs"]]
    assert len(messages) == len(set(messages)) == len(list(tmp_path.glob("bug-*.json")))


def test_traces_are_never_overwritten(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    target = f"{PROGRAMS}/threads_lock_order.py:main"
    for _ in range(2):
        assert main(["check", target, "--out", str(tmp_path), "--strategy", "random"]) == 1
    assert sorted(p.name for p in tmp_path.glob("bug-*.json")) == ["bug-1.json", "bug-2.json"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["check", "missing.py:main"], "does not exist"),
        (["check", f"{PROGRAMS}/threads_counter.py:nothing"], "no top-level function 'nothing'"),
        (["check", f"{PROGRAMS}/threads_counter.py:"], "FILE.py:FUNC"),
        (["check", f"{PROGRAMS}/cli_import_error.py:main"], "ModuleNotFoundError"),
        (["check", f"{PROGRAMS}/threads_counter.py:unlocked", "--strategy", "nonsense"], "unknown --strategy 'nonsense'"),
        (["check", f"{PROGRAMS}/threads_counter.py:unlocked", "--budget", "0"], "--budget"),
        (["check", f"{PROGRAMS}/threads_counter.py:unlocked", "--bogus"], "unknown option --bogus"),
        (["replay", "missing-trace.json"], "does not exist"),
    ],
)
def test_bad_input_exits_two_with_a_message_and_no_traceback(arguments: list[str], message: str, tmp_path: Path) -> None:
    # In a directory of its own: a refused target still leaves the default --out directory behind.
    result = run_cli(*arguments, cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_a_strategy_not_built_yet_is_refused_not_aliased(capsys: pytest.CaptureFixture) -> None:
    from dnsse.search.registry import PLANNED

    if not PLANNED:
        pytest.skip("every strategy is built")
    status = main(["check", f"{PROGRAMS}/threads_counter.py:unlocked", "--strategy", PLANNED[-1]])
    assert status == 2
    assert "not built yet" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"format": "something-else"}', "not a dnsse trace"),
        ('{"format": "dnsse-trace", "version": 99}', "format version 99"),
        ('{"format": "dnsse-trace", "version": 1, "target": "x.py:main"}', "is missing"),
    ],
)
def test_malformed_traces_are_bad_input(tmp_path: Path, content: str, message: str, capsys) -> None:
    trace = tmp_path / "trace.json"
    trace.write_text(content)
    assert main(["replay", str(trace)]) == 2
    assert message in capsys.readouterr().err


def test_a_trace_with_corrupted_choices_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["check", f"{PROGRAMS}/threads_lock_order.py:main", "--out", str(tmp_path)]) == 1
    trace = tmp_path / "bug-1.json"
    data = json.loads(trace.read_text())
    data["choices"][0] = ["agent", 2, 5]
    trace.write_text(json.dumps(data))
    assert main(["replay", str(trace)]) == 2
    assert "malformed" in capsys.readouterr().err


def test_replay_of_a_changed_program_says_the_trace_no_longer_fits(tmp_path: Path, capsys) -> None:
    program = tmp_path / "racy.py"
    shutil.copy(PROGRAMS / "cli_changing.py", program)
    assert main(["check", f"{program}:main", "--out", str(tmp_path / "t"), "--strategy", "random"]) == 1
    assert main(["replay", str(tmp_path / "t" / "bug-1.json")]) == 1
    # One more thread: the recorded choices no longer fit the program.
    program.write_text(program.read_text().replace("range(2)", "range(3)").replace("== 2", "== 3"))
    capsys.readouterr()
    assert main(["replay", str(tmp_path / "t" / "bug-1.json")]) == 2
    assert "no longer fits" in capsys.readouterr().err


def _without_digest(trace: Path) -> None:
    data = json.loads(trace.read_text())
    del data["source_sha256"]
    trace.write_text(json.dumps(data))


def test_replay_of_a_trace_without_a_source_digest_warns_that_it_cannot_check_the_fit(tmp_path: Path, capsys) -> None:
    program = tmp_path / "racy.py"
    shutil.copy(PROGRAMS / "cli_changing.py", program)
    assert main(["check", f"{program}:main", "--out", str(tmp_path / "t"), "--strategy", "random"]) == 1
    trace = tmp_path / "t" / "bug-1.json"
    _without_digest(trace)
    capsys.readouterr()
    assert main(["replay", str(trace)]) == 1
    out = capsys.readouterr()
    assert "reproduced" in out.out
    assert "records no source digest" in out.err and "cannot check that it fits" in out.err


def test_an_old_trace_that_passes_on_a_fixed_program_says_it_could_not_check_the_fit(tmp_path: Path, capsys) -> None:
    program = tmp_path / "racy.py"
    shutil.copy(PROGRAMS / "cli_changing.py", program)
    assert main(["check", f"{program}:main", "--out", str(tmp_path / "t"), "--strategy", "random"]) == 1
    trace = tmp_path / "t" / "bug-1.json"
    _without_digest(trace)
    # The fix keeps every scheduling point: the old choices still fit, and the run passes.
    program.write_text(program.read_text().replace("== 2,", ">= 1,"))
    capsys.readouterr()
    assert main(["replay", str(trace)]) == 0
    out = capsys.readouterr()
    assert "the execution passed" in out.out
    assert "records no source digest" in out.err


def test_a_changed_program_is_refused_unless_the_replay_is_forced(tmp_path: Path, capsys) -> None:
    program = tmp_path / "racy.py"
    shutil.copy(PROGRAMS / "cli_changing.py", program)
    assert main(["check", f"{program}:main", "--out", str(tmp_path / "t"), "--strategy", "random"]) == 1
    trace = tmp_path / "t" / "bug-1.json"
    program.write_text(program.read_text().replace("== 2,", ">= 1,"))
    capsys.readouterr()
    assert main(["replay", str(trace)]) == 2
    refused = capsys.readouterr().err
    assert "changed since the trace was recorded" in refused and "dnsse replay --force" in refused
    assert main(["replay", "--force", str(trace)]) == 0
    out = capsys.readouterr()
    assert "the execution passed" in out.out and "replaying it anyway (--force)" in out.err


def test_replay_of_a_fixed_program_passes_with_exit_zero(tmp_path: Path, capsys) -> None:
    program = tmp_path / "racy.py"
    shutil.copy(PROGRAMS / "cli_changing.py", program)
    assert main(["check", f"{program}:main", "--out", str(tmp_path / "t"), "--strategy", "random"]) == 1
    # The fix: the read-modify-write under a lock taken before the read.
    fixed = program.read_text().replace(
        'counter = {"value": 0}', 'counter = {"value": 0}\nguard = threading.Lock()'
    ).replace('    value = counter["value"]\n    counter["value"] = value + 1',
              '    with guard:\n        value = counter["value"]\n        counter["value"] = value + 1')
    assert fixed != program.read_text()
    program.write_text(fixed)
    capsys.readouterr()
    status = main(["replay", str(tmp_path / "t" / "bug-1.json")])
    out = capsys.readouterr()
    # The fixed program passes the old schedule, or its choices no longer fit: never the old bug.
    assert status in (0, 2), out
    assert "did not happen" in out.out if status == 0 else "no longer fits" in out.err
