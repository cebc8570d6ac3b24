"""A trace is input too: malformed, huge or foreign traces are refused with exit 2, and a trace must fit its program."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hostile_cli import TARGETS, edit_trace, output, run_cli

from dnsse.validation import MAX_TRACE_BYTES


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(a copy of the exits target, the trace of its sys.exit(3) bug)."""
    directory = tmp_path_factory.mktemp("recorded")
    program = directory / "exits.py"
    shutil.copy(TARGETS / "exits.py", program)
    result = run_cli("check", f"{program}:exit_three", "--out", str(directory / "traces"))
    assert result.returncode == 1, output(result)
    return program, directory / "traces" / "bug-1.json"


def test_the_recorded_trace_replays(recorded: tuple[Path, Path]) -> None:
    replayed = run_cli("replay", str(recorded[1]))
    assert replayed.returncode == 1 and "reproduced" in replayed.stdout, output(replayed)


def test_traces_are_readable_by_others_and_no_partial_file_is_left(recorded: tuple[Path, Path]) -> None:
    trace = recorded[1]
    assert trace.stat().st_mode & 0o777 == 0o644
    # The trace, the campaign record that `dnsse report` reads and the known failures; nothing partial.
    assert sorted(path.name for path in trace.parent.iterdir()) == ["bug-1.json", "campaign.json", "known"]
    (kept,) = list((trace.parent / "known").rglob("*.json"))
    assert kept.stat().st_mode & 0o777 == 0o644 and kept.read_bytes() == trace.read_bytes()


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"limits": [1, 2]}, "the field 'limits' must be an object"),
        ({"limits": {"max_steps": 100, "max_seconds": float("nan")}}, "limits.max_seconds must be a finite number"),
        ({"limits": {"max_steps": 100, "max_seconds": float("inf")}}, "limits.max_seconds must be a finite number"),
        ({"limits": {"max_steps": 10**12, "max_seconds": 5}}, "limits.max_steps"),
        ({"limits": {"max_steps": "many", "max_seconds": 5}}, "limits.max_steps must be an integer"),
        ({"choices": []}, "the field 'choices' is empty"),
        ({"choices": [["seed", 2, 5]]}, "0 <= index < options"),
        ({"world_size": 10**9}, "world_size"),
        ({"inputs": {"not_an_input": 3}, "pinned": ["not_an_input"]}, "not_an_input"),
    ],
)
def test_a_malformed_trace_is_bad_input(
    recorded: tuple[Path, Path], tmp_path: Path, fields: dict, message: str
) -> None:
    broken = edit_trace(recorded[1], tmp_path / "broken.json", **fields)
    replayed = run_cli("replay", str(broken))
    assert replayed.returncode == 2, output(replayed)
    assert message in replayed.stderr and "Traceback" not in output(replayed)


def test_extra_choices_at_the_end_do_not_fit(recorded: tuple[Path, Path], tmp_path: Path) -> None:
    choices = json.loads(recorded[1].read_text())["choices"]
    longer = edit_trace(recorded[1], tmp_path / "longer.json", choices=choices + [["agent", 2, 1]])
    replayed = run_cli("replay", str(longer))
    assert replayed.returncode == 2, output(replayed)
    assert f"ended after {len(choices)} of the {len(choices) + 1} recorded choices" in replayed.stderr


def test_a_trace_replayed_against_a_changed_program_says_it_does_not_fit(
    recorded: tuple[Path, Path], tmp_path: Path
) -> None:
    program, trace = recorded
    changed = tmp_path / "exits.py"
    changed.write_text(program.read_text().replace("sys.exit(3)", "sys.exit(4)"))
    moved = edit_trace(trace, tmp_path / "bug.json", target=f"{changed}:exit_three")
    replayed = run_cli("replay", str(moved))
    assert replayed.returncode == 2, output(replayed)
    assert "changed since the trace was recorded" in replayed.stderr


def test_a_huge_trace_is_refused_without_reading_it(tmp_path: Path) -> None:
    huge = tmp_path / "huge.json"
    with huge.open("wb") as stream:
        stream.truncate(MAX_TRACE_BYTES + 1)  # sparse: no disk used
    replayed = run_cli("replay", str(huge))
    assert replayed.returncode == 2, output(replayed)
    assert "more than dnsse reads" in replayed.stderr


def test_a_deeply_nested_trace_is_refused(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    replayed = run_cli("replay", str(deep))
    assert replayed.returncode == 2, output(replayed)
    assert "nested too deeply" in replayed.stderr and "Traceback" not in output(replayed)
