"""Executions are a function of (target, choices): hash seed, randomness, process state, clock.

And the determinism check: a replay that goes another way says where, and a
program that is not deterministic under control is reported as such, never
as a bug or a pass.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from dnsse.cli import main
from dnsse.engine.runner import run_execution
from dnsse.frameworks.threads.framework import ThreadsFramework
from helpers import SeededChooser, load_program

PROGRAMS = Path(__file__).parent / "programs" / "determinism"
# A lost update that random finds within a few executions whatever the hash seed of this process.
RACY = f"{PROGRAMS.parent}/threads_counter.py:unlocked"


def run_cli(*arguments: str, hash_seed: str | None = None) -> subprocess.CompletedProcess:
    """The real command in a child process, under a hash seed of our choosing (None: unset)."""
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONHASHSEED"}
    if hash_seed is not None:
        environment["PYTHONHASHSEED"] = hash_seed
    return subprocess.run(
        [sys.executable, "-m", "dnsse.cli", *arguments], capture_output=True, text=True, env=environment, timeout=600
    )


def found_execution(output: str) -> int:
    line = next(line for line in output.splitlines() if line.startswith("found a bug in execution"))
    return int(line.split()[5])


def test_a_set_ordered_program_finds_its_bug_at_the_same_execution_and_replays(tmp_path: Path) -> None:
    target = f"{PROGRAMS}/set_order.py:main"
    executions = []
    for run in ("a", "b"):
        found = run_cli("check", target, "--strategy", "random", "--seed", "3", "--out", str(tmp_path / run))
        assert found.returncode == 1, found.stdout + found.stderr
        executions.append(found_execution(found.stdout))
    assert executions[0] == executions[1]
    trace = json.loads((tmp_path / "a" / "bug-1.json").read_text())
    assert trace["hash_seed"] == 0
    replayed = run_cli("replay", str(tmp_path / "a" / "bug-1.json"))
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "reproduced" in replayed.stdout


def test_replay_runs_under_the_hash_seed_the_trace_was_recorded_under(tmp_path: Path) -> None:
    target = f"{PROGRAMS}/set_order.py:main"
    found = run_cli("check", target, "--strategy", "random", "--seed", "1", "--out", str(tmp_path), hash_seed="2")
    assert found.returncode == 1, found.stdout + found.stderr
    assert json.loads((tmp_path / "bug-1.json").read_text())["hash_seed"] == 2
    replayed = run_cli("replay", str(tmp_path / "bug-1.json"), hash_seed="5")
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "reproduced" in replayed.stdout


def test_the_environment_does_not_leak_from_one_execution_to_the_next(tmp_path: Path, capsys) -> None:
    status = main(
        ["check", f"{PROGRAMS}/environ_counter.py:main", "--budget", "10", "--out", str(tmp_path)],
        contained=False,
    )
    assert status == 0, capsys.readouterr().out
    assert "DNSSE_TEST_RUNS" not in os.environ


@pytest.mark.parametrize("function", ["main", "clean"])
def test_every_execution_starts_in_an_empty_private_directory(function: str, tmp_path: Path, capsys) -> None:
    status = main(
        ["check", f"{PROGRAMS}/leaves_files.py:{function}", "--budget", "5", "--out", str(tmp_path)],
        contained=False,
    )
    assert status == 0, capsys.readouterr().out


@pytest.mark.torch
def test_torchs_generator_is_seeded_from_the_choices() -> None:
    target = load_program("determinism/torch_draws.py:main")
    framework = ThreadsFramework()
    with framework.activate():
        messages = [run_execution(target, framework, SeededChooser(seed)).bug.message for seed in (4, 5, 4)]
    assert messages[0] == messages[2]
    assert messages[0] != messages[1]


def test_every_random_source_is_drawn_from_the_choices() -> None:
    target = load_program("determinism/draws_everything.py:main")
    framework = ThreadsFramework()
    with framework.activate():
        messages = [run_execution(target, framework, SeededChooser(seed)).bug.message for seed in (4, 4, 5)]
    assert messages[0] == messages[1]
    assert messages[0] != messages[2]
    # Outside an execution, the real sources are back.
    assert os.urandom(8) != os.urandom(8)


@pytest.mark.parametrize(("workers", "deep"), [("1", False), ("2", False), ("2", True)])
def test_the_working_directories_of_the_executions_are_removed_when_the_processes_end(
    workers: str, deep: bool, tmp_path: Path
) -> None:
    # Run as a library (no supervisor whose directory would hold them): in this process, or in worker
    # processes, which end without exit hooks. Under a TMPDIR too deep for the fork server's socket
    # (a Unix socket path has at most 107 bytes), the workers are spawned instead.
    temporary = Path(tempfile.mkdtemp(prefix="t-", dir="/tmp")) if not deep else tmp_path / ("deep" * 20)
    temporary.mkdir(exist_ok=True)
    try:
        code = (
            "import sys; from dnsse.cli import main; "
            f"sys.exit(main(['check', {RACY!r}, '--workers', {workers!r}, '--budget', '12', '--out', "
            f"{str(tmp_path / 'out')!r}], contained=False))"
        )
        ran = subprocess.run([sys.executable, "-c", code], env={**os.environ, "TMPDIR": str(temporary)},
                             capture_output=True, text=True, timeout=600)
        assert ran.returncode == 1, ran.stdout + ran.stderr
        assert list(temporary.iterdir()) == []
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


@pytest.mark.torch
def test_torch_reads_virtual_time_and_its_flags_are_restored(tmp_path: Path, capsys) -> None:
    torch = pytest.importorskip("torch")
    status = main(
        ["check", f"{PROGRAMS}/clock_torch.py:main", "--strategy", "random", "--out", str(tmp_path)],
        contained=False,
    )
    out = capsys.readouterr().out
    # An hour of sleep each, on one virtual clock: no real waiting, the same readings on replay.
    assert status == 1 and "slept 3600s" in out and "slept 7200s" not in out
    assert main(["replay", str(tmp_path / "bug-1.json")], contained=False) == 1
    assert "reproduced" in capsys.readouterr().out
    assert torch.get_default_dtype() == torch.float32


def test_a_replay_that_goes_another_way_says_where(tmp_path: Path, capsys) -> None:
    assert main(["check", RACY, "--strategy", "random", "--out", str(tmp_path)], contained=False) == 1
    path = tmp_path / "bug-1.json"
    trace = json.loads(path.read_text())
    position, choice = next(
        (i, c) for i, c in enumerate(trace["choices"]) if c[0] == "agent" and c[3]["agent"] != "main"
    )
    # Run another agent than the recorded one at that choice.
    choice[2] = (choice[2] + 1) % choice[1]
    path.write_text(json.dumps(trace))
    capsys.readouterr()
    assert main(["replay", str(path)], contained=False) == 2
    error = capsys.readouterr().err
    # Agents doing the same thing at the same line are alike to the check; the run goes another way later.
    assert "no longer fits" in error and "the trace ran" in error and "this run offered" in error


def test_a_trace_with_choices_left_over_does_not_fit(tmp_path: Path, capsys) -> None:
    assert main(["check", RACY, "--strategy", "random", "--out", str(tmp_path)], contained=False) == 1
    path = tmp_path / "bug-1.json"
    trace = json.loads(path.read_text())
    trace["choices"].append(["agent", 2, 1])
    path.write_text(json.dumps(trace))
    capsys.readouterr()
    assert main(["replay", str(path)], contained=False) == 2
    assert "does not fit" in capsys.readouterr().err


def test_a_program_that_is_not_deterministic_under_control_is_no_bug(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DNSSE_TEST_COUNTER_FILE", str(tmp_path / "counter"))
    out = tmp_path / "traces"
    status = main(
        ["check", f"{PROGRAMS}/first_run_differs.py:main", "--strategy", "random", "--out", str(out)],
        contained=False,
    )
    captured = capsys.readouterr()
    assert status == 2
    assert "not deterministic under control" in captured.err
    assert "found a bug" not in captured.out
    assert not list(out.glob("bug-*.json"))


def test_every_announced_bug_was_confirmed_by_replaying_its_trace(tmp_path: Path, capsys) -> None:
    report = tmp_path / "report.json"
    status = main(
        ["check", RACY, "--strategy", "random", "--out", str(tmp_path), "--json", str(report)], contained=False
    )
    assert status == 1
    assert "confirmed by replay" in capsys.readouterr().out
    assert json.loads(report.read_text())["bugs"][0]["confirmed_by_replay"] is True


def test_a_bug_whose_message_prints_a_set_of_objects_replays(tmp_path: Path, capsys) -> None:
    # The set iterates in the order of its elements' addresses, which differ from run to run: the
    # replay shows the same failure with the elements in another order, and that is the same bug.
    target = f"{PROGRAMS}/set_in_message.py:main"
    assert main(
        ["check", target, "--strategy", "random", "--budget", "5", "--out", str(tmp_path)],
        contained=False,
    ) == 1
    assert "Item(11)" in capsys.readouterr().out
    for _ in range(3):
        assert main(["replay", str(tmp_path / "bug-1.json")], contained=False) == 1
        assert "reproduced" in capsys.readouterr().out
