"""A trace recorded in one checkout replays in another (a CI artifact on a laptop): --root, or the project at hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dnsse.cli import main

# Checked as a function and as a script (its __main__ block calls main()).
RACY = (Path(__file__).parent / "programs" / "lost_update_box.py").read_text()


def _recorded(tmp_path: Path, monkeypatch, capsys, *target: str) -> tuple[Path, Path]:
    """A project (marked by its pyproject.toml) checked where it was first, then moved away: (its new root, trace)."""
    first = tmp_path / "ci" / "repo"
    (first / "src").mkdir(parents=True)
    (first / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (first / "src" / "racy.py").write_text(RACY)
    monkeypatch.chdir(first / "src")
    assert main(["check", *target, "--out", str(first / "traces")], contained=False) == 1
    capsys.readouterr()
    recorded = json.loads((first / "traces" / "bug-1.json").read_text())
    assert recorded["root"] == str(first)
    moved = tmp_path / "laptop" / "checkout"
    moved.parent.mkdir()
    shutil.move(first, moved)
    return moved, moved / "traces" / "bug-1.json"


@pytest.mark.parametrize("target", [["racy.py:main"], ["racy.py"]], ids=["function", "script"])
def test_a_moved_trace_replays_with_root(target: list[str], tmp_path: Path, monkeypatch, capsys) -> None:
    root, trace = _recorded(tmp_path, monkeypatch, capsys, *target)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    copied = elsewhere / "bug.json"
    shutil.copy(trace, copied)
    monkeypatch.chdir(elsewhere)
    # Neither the recorded path nor a project around here or around the trace holds it: told how to say where.
    assert main(["replay", str(copied)], contained=False) == 2
    err = capsys.readouterr().err
    assert "does not exist here" in err and f"recorded in the project {tmp_path / 'ci' / 'repo'}" in err
    assert "--root DIR" in err
    assert main(["replay", str(copied), "--root", str(root)], contained=False) == 1
    captured = capsys.readouterr()
    assert "reproduced" in captured.out and "lost update: 1" in captured.out
    assert f"replaying the target found in {root}" in captured.err


def test_a_moved_trace_replays_from_inside_its_checkout_or_kept_in_it(tmp_path: Path, monkeypatch, capsys) -> None:
    root, trace = _recorded(tmp_path, monkeypatch, capsys, "racy.py:main")
    monkeypatch.chdir(tmp_path)
    # The trace kept inside the checkout: that checkout's root is tried.
    assert main(["replay", str(trace)], contained=False) == 1
    assert "reproduced" in capsys.readouterr().out
    # The trace elsewhere, run from inside the checkout: the current project's root is tried.
    shutil.copy(trace, tmp_path / "bug.json")
    monkeypatch.chdir(root / "src")
    assert main(["replay", str(tmp_path / "bug.json")], contained=False) == 1
    assert "reproduced" in capsys.readouterr().out


def test_root_that_does_not_hold_the_target_or_does_not_exist_is_bad_input(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    _, trace = _recorded(tmp_path, monkeypatch, capsys, "racy.py:main")
    assert main(["replay", str(trace), "--root", str(tmp_path / "missing")], contained=False) == 2
    assert "--root" in capsys.readouterr().err
    assert main(["replay", str(trace), "--root", str(tmp_path)], contained=False) == 2
    assert "src/racy.py (recorded under" in capsys.readouterr().err


def test_a_moved_program_that_changed_is_still_refused_by_its_digest(tmp_path: Path, monkeypatch, capsys) -> None:
    root, trace = _recorded(tmp_path, monkeypatch, capsys, "racy.py:main")
    (root / "src" / "racy.py").write_text(RACY.replace("box[0] == 2", "box[0] >= 1"))
    assert main(["replay", str(trace), "--root", str(root)], contained=False) == 2
    assert "changed since the trace was recorded" in capsys.readouterr().err
