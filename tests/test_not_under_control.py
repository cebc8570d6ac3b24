"""An API dnsse does not control stops the campaign with exit 2 naming it: never a bug (DESIGN §1, §3)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parent / "programs"


def check(spec: str, tmp_path: Path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", str(PROGRAMS / spec), "--budget", "20", "--out", str(tmp_path),
         *options],
        capture_output=True, text=True, timeout=600,
    )


@pytest.mark.parametrize(
    ("spec", "api", "line"),
    [
        ("uncontrolled_threads.py:raw_thread", "_thread.start_new_thread", "uncontrolled_threads.py:7"),
        ("uncontrolled_threads.py:raw_thread_swallowed", "_thread.start_new_thread", "uncontrolled_threads.py:13"),
        ("uncontrolled_torch.py:own_store", "torch.distributed.TCPStore", "uncontrolled_torch.py:9"),
        ("uncontrolled_torch.py:spawns", "torch.multiprocessing.spawn", "uncontrolled_torch.py:21"),
        ("uncontrolled_ray.py:named_actors", "ray.util.list_named_actors",
         "uncontrolled_ray.py:8"),
        ("uncontrolled_ray.py:serve", "ray.serve", "uncontrolled_ray.py:14"),
        ("uncontrolled_ray.py:runtime_context", "ray.get_runtime_context().get_accelerator_ids",
         "uncontrolled_ray.py:19"),
    ],
)
def test_a_call_of_an_uncontrolled_api_is_exit_2_naming_it_even_when_the_program_catches_it(
    spec: str, api: str, line: str, tmp_path: Path
) -> None:
    done = check(spec, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"{api} is not under control yet (called at " in done.stderr and line in done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert "found a bug" not in done.stdout and not list(tmp_path.glob("bug-*.json"))


def test_an_unmodelled_part_of_ray_imported_by_the_module_is_refused_before_any_execution(tmp_path: Path) -> None:
    done = check("uncontrolled_ray_import.py:main", tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "ray.util.collective is not under control yet" in done.stderr
    assert "Traceback" not in done.stderr
