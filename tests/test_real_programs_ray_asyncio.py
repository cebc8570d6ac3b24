"""Programs in the style of Ray's documentation and of asyncio servers: correct versions pass,
bug variants are found and their traces replay."""

from __future__ import annotations

from pathlib import Path

import pytest

from dnsse.cli import main

REAL = Path(__file__).parent / "real_programs"

CORRECT = [
    ("asyncio_batcher.py:serve", 40),
    ("asyncio_echo_server.py:echo", 40),
    ("asyncio_echo_server.py:tally", 40),
    ("ray_parameter_server.py:train_sync", 30),
    ("ray_async_actor.py:serve_locked", 30),
    ("ray_pipelining.py:run", 30),
    ("ray_actor_queue.py:run", 30),
    ("ray_actor_pool.py:run", 30),
]
BUGGY = [
    ("asyncio_batcher.py:serve_lossy", "exception"),
    ("asyncio_echo_server.py:tally_racy", "lost update"),
    ("ray_parameter_server.py:train_async", "lost update"),
    ("ray_async_actor.py:serve_racy", "exception"),
    ("ray_pipelining.py:run_threaded_queue", "exception"),
    ("ray_actor_queue.py:run_one_marker", "deadlock"),
    ("ray_actor_pool.py:run_unordered", "exception"),
]


@pytest.mark.parametrize(("target", "budget"), CORRECT)
def test_the_correct_version_passes(target: str, budget: int, tmp_path: Path, capsys) -> None:
    status = main(["check", f"{REAL}/{target}", "--budget", str(budget), "--out", str(tmp_path)])
    captured = capsys.readouterr()
    assert status == 0, captured.out + captured.err
    assert "no bug found" in captured.out


@pytest.mark.slow
@pytest.mark.parametrize(("target", "kind"), BUGGY)
def test_the_bug_variant_is_found_and_replays(target: str, kind: str, tmp_path: Path, capsys) -> None:
    status = main(["check", f"{REAL}/{target}", "--budget", "200", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 1, out
    assert kind in out
    replayed = main(["replay", str(tmp_path / "bug-1.json")])
    assert replayed == 1
    assert "reproduced" in capsys.readouterr().out


@pytest.mark.torch
def test_a_ray_program_that_imports_torch_passes_as_without_it(tmp_path: Path, capsys) -> None:
    # Its open input draws counts of requests too large to finish: each such run ends at the execution
    # timeout with the turn on its way between two agents, which is no hang of the program.
    program = tmp_path / "ray_async_actor_torch.py"
    program.write_text("import torch  # noqa: F401\n" + (REAL / "ray_async_actor.py").read_text())
    status = main(
        ["check", f"{program}:serve_locked", "--budget", "30", "--out", str(tmp_path / "out")]
    )
    captured = capsys.readouterr()
    assert status == 0, captured.out + captured.err
    assert "no bug found" in captured.out and "inputs rejected by the program" in captured.out
