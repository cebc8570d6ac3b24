"""The target's directory is importable, as with `python FILE.py`: sibling modules are the program's own.

Each execution (each rank) imports its own fresh copy of them, and their code
is traced like the target's, so a race through a sibling's data is found.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from helpers import SeededChooser

from dnsse.engine.runner import run_execution
from dnsse.engine.target import LoadedTarget, TargetSpec
from dnsse.frameworks.threads.framework import ThreadsFramework

SIBLINGS = Path(__file__).parent / "programs" / "siblings"


def run_cli(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dnsse.cli", *arguments], capture_output=True, text=True, timeout=600
    )


def test_a_sibling_modules_globals_start_over_in_every_execution(tmp_path: Path) -> None:
    done = run_cli(
        "check", f"{SIBLINGS / 'threads_siblings.py'}:runs_once", "--strategy", "random", "--budget", "50",
        "--out", str(tmp_path),
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_execution_1_and_execution_50_of_one_schedule_show_the_same_bug() -> None:
    target = LoadedTarget(TargetSpec.parse(f"{SIBLINGS / 'threads_siblings.py'}:lost_update"))
    framework = ThreadsFramework()
    seed = next(s for s in range(200) if _run(target, framework, s).bug is not None)
    with framework.activate():
        runs = [run_execution(target, framework, SeededChooser(seed)) for _ in range(50)]
    assert runs[0].bug is not None and "lost update: hits is 1" in runs[0].bug.message
    assert {run.bug.signature() for run in runs if run.bug is not None} == {runs[0].bug.signature()}
    assert all(run.bug is not None for run in runs)
    assert all(run.choices == runs[0].choices for run in runs)


def _run(target: LoadedTarget, framework: ThreadsFramework, seed: int):
    with framework.activate():
        return run_execution(target, framework, SeededChooser(seed))


def test_a_race_through_a_sibling_modules_dict_is_found_and_replays(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    found = run_cli(
        "check", f"{SIBLINGS / 'threads_siblings.py'}:lost_update", "--out", str(tmp_path / "traces"),
        "--json", str(report),
    )
    assert found.returncode == 1, found.stdout + found.stderr
    [bug] = json.loads(report.read_text())["bugs"]
    assert bug["kind"] == "exception" and "lost update: hits is 1" in bug["message"]
    replayed = run_cli("replay", bug["trace"])
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "reproduced" in replayed.stdout
    # The racing steps are located in the sibling package's own file.
    assert "tools/ops.py:5" in replayed.stdout and "tools/ops.py:6" in replayed.stdout


def test_each_rank_of_a_torch_program_imports_its_own_copy(tmp_path: Path) -> None:
    done = run_cli(
        "check", f"{SIBLINGS / 'torch_siblings.py'}:main", "--strategy", "random", "--budget", "5",
        "--out", str(tmp_path),
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_ray_driver_imports_a_sibling_module_and_package(tmp_path: Path) -> None:
    done = run_cli(
        "check", f"{SIBLINGS / 'ray_siblings.py'}:main", "--strategy", "random", "--budget", "5",
        "--out", str(tmp_path),
    )
    assert done.returncode == 0, done.stdout + done.stderr
