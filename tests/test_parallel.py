"""``--workers N``: executions in parallel worker processes on this machine (DESIGN §3, §7)."""

from __future__ import annotations

import ctypes
import json
import multiprocessing
import subprocess
import sys
from pathlib import Path

import pytest

from dnsse.cli import main
from dnsse.engine.target import LoadedTarget, TargetSpec
from dnsse.campaign.config import CampaignConfig
from dnsse.campaign.local_worker import run_worker, worker_settings
from dnsse.campaign.worker_reports import worker_failure

ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = Path(__file__).parent / "programs"
EXAMPLE = ROOT / "examples" / "loss_scaling.py"


def run_cli(*arguments: str) -> subprocess.CompletedProcess:
    """The real command, in a child process, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "dnsse.cli", *arguments], capture_output=True, text=True, timeout=600
    )


def test_two_workers_find_the_example_bug_and_its_trace_replays(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    found = run_cli("check", f"{EXAMPLE}:main", "--workers", "2", "--out", str(tmp_path), "--json", str(report))
    assert found.returncode == 1, found.stdout + found.stderr
    assert "2 worker processes" in found.stdout
    data = json.loads(report.read_text())
    assert [bug["kind"] for bug in data["bugs"]] == ["exception"]
    trace = json.loads(Path(data["bugs"][0]["trace"]).read_text())
    assert trace["execution"] == data["bugs"][0]["execution"]
    replayed = run_cli("replay", data["bugs"][0]["trace"])
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "reproduced" in replayed.stdout and "buffer read before Work.wait()" in replayed.stdout


def test_two_workers_find_the_lock_order_deadlock(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    report = tmp_path / "r.json"
    status = main(
        ["check", f"{PROGRAMS}/threads_lock_order.py:main", "--workers", "2",
         "--out", str(tmp_path), "--json", str(report)]
    )
    assert status == 1
    assert "Thread-1" in capsys.readouterr().out
    assert [bug["kind"] for bug in json.loads(report.read_text())["bugs"]] == ["deadlock"]


def test_a_correct_program_runs_the_whole_budget_across_workers(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    status = main(
        ["check", f"{PROGRAMS}/threads_counter.py:locked", "--workers", "2", "--budget", "40",
         "--out", str(tmp_path), "--json", str(report)]
    )
    assert status == 0
    assert json.loads(report.read_text())["executions"] == 40
    assert not list(tmp_path.glob("bug-*.json"))


def test_keep_going_writes_one_trace_per_distinct_bug_across_workers(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    status = main(
        ["check", f"{PROGRAMS}/threads_counter.py:unlocked", "--workers", "2", "--keep-going", "--budget", "40",
         "--strategy", "random", "--out", str(tmp_path), "--json", str(report)]
    )
    assert status == 1
    data = json.loads(report.read_text())
    assert data["executions"] == 40
    messages = [bug["message"] for bug in data["bugs"]]
    assert len(messages) == len(set(messages)) == len(list(tmp_path.glob("bug-*.json")))


def test_specs_of_the_target_and_of_the_command_line_apply_in_workers(tmp_path: Path) -> None:
    declared = main(
        ["check", f"{PROGRAMS}/spec_declared.py:main", "--workers", "2", "--strategy", "random",
         "--budget", "200", "--out", str(tmp_path / "declared"), "--json", str(tmp_path / "declared.json")]
    )
    given = main(
        ["check", f"{PROGRAMS}/threads_counter.py:locked", "--workers", "2", "--spec", "G !lock.acquire",
         "--out", str(tmp_path / "given"), "--json", str(tmp_path / "given.json")]
    )
    assert (declared, given) == (1, 1)
    for name in ("declared", "given"):
        bugs = json.loads((tmp_path / f"{name}.json").read_text())["bugs"]
        assert [bug["kind"] for bug in bugs] == ["spec_violation"], name


def test_coverage_of_workers_is_merged(tmp_path: Path) -> None:
    """``random`` runs the same executions whatever the worker count, so coverage must match."""
    covered = []
    for workers in ("1", "2"):
        report = tmp_path / f"{workers}.json"
        status = main(
            ["check", f"{PROGRAMS}/threads_counter.py:locked", "--workers", workers, "--budget", "20",
             "--strategy", "random", "--coverage", "--out", str(tmp_path), "--json", str(report)]
        )
        assert status == 0
        covered.append(json.loads(report.read_text())["coverage"])
    assert covered[0] == covered[1] and covered[0]["branches_covered"] > 0


def test_fewer_than_one_worker_is_refused(capsys: pytest.CaptureFixture) -> None:
    assert main(["check", f"{PROGRAMS}/threads_counter.py:locked", "--workers", "0"]) == 2
    assert "--workers must be at least 1" in capsys.readouterr().err


def test_workers_that_die_before_any_execution_are_a_clear_error(tmp_path: Path) -> None:
    target = tmp_path / "dies.py"
    target.write_text(
        "import multiprocessing\nimport os\nimport threading\n\n"
        "if multiprocessing.parent_process() is not None:\n    os._exit(5)\n\n\ndef main():\n    pass\n"
    )
    result = run_cli("check", f"{target}:main", "--workers", "2", "--out", str(tmp_path))
    assert result.returncode == 2, result.stdout + result.stderr
    assert "died 3 times (exit status 5) without finishing an execution" in result.stderr
    assert "--workers 1" in result.stderr and "Traceback" not in result.stderr


def test_bad_input_in_a_worker_reaches_the_parent_as_bad_input(tmp_path: Path) -> None:
    target = tmp_path / "gone.py"
    target.write_text("import threading\n\n\ndef main():\n    pass\n")
    loaded = LoadedTarget(TargetSpec.parse(f"{target}:main"))
    settings = worker_settings(CampaignConfig(target=str(loaded.spec)), loaded, 0, 2, None)
    target.unlink()  # removed after the parent loaded it
    reader, writer = multiprocessing.Pipe(duplex=False)
    run_worker(settings, writer, ctypes.c_bool(False))
    messages = []
    while reader.poll():
        messages.append(json.loads(reader.recv_bytes()))
    assert [message["kind"] for message in messages] == ["failed"]
    error = worker_failure(0, messages[0])
    assert "does not exist" in str(error)
