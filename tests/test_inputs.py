"""Explored inputs: domains, choices, pinning, and inputs in reports and traces."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from dnsse.engine.inputs import FloatDomain, IntDomain, ListDomain, float_from_order, float_order
from dnsse.frameworks.threads.framework import ThreadsFramework
from tests.helpers import PROGRAMS, load_program


def run_cli(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dnsse.cli", *arguments], capture_output=True, text=True, timeout=600)


def test_int_domain_is_a_bijection_ordered_by_distance_from_the_default() -> None:
    domain = IntDomain(3, 0, 10)
    values = [domain.value_of([i]) for i in range(domain.widths()[0])]
    assert values[:5] == [3, 4, 2, 5, 1]
    assert sorted(values) == list(range(0, 11))
    assert all(domain.index_of(v) == [i] for i, v in enumerate(values))
    assert domain.index_of(11) is None


def test_float_domain_round_trips_and_index_zero_is_the_default() -> None:
    domain = FloatDomain(1.5, -2.0, 1e6)
    assert domain.value_of([0]) == 1.5
    for value in (-2.0, -0.0, 0.0, 1e-300, 3.25, 65504.0, 1e6):
        (index,) = domain.index_of(value)
        assert domain.value_of([index]) == value
    assert domain.index_of(math.nan) is None and domain.index_of(2e6) is None
    assert all(float_from_order(float_order(x)) == x for x in (-1e308, -1.0, 0.0, 5e-324, 1.0))
    assert float_order(-1.0) < float_order(-0.0) <= float_order(0.0) < float_order(5e-324)


def test_list_domain_puts_the_default_first() -> None:
    domain = ListDomain("b", ["a", "b", "c"], "one of")
    assert [domain.value_of([i]) for i in range(3)] == ["b", "a", "c"]


def test_inputs_of_every_supported_annotation_are_found() -> None:
    framework = ThreadsFramework()
    names = {p.name: p for p in framework.inputs(load_program("directed_inputs.py:choices"))}
    assert set(names) == {"mode", "flag", "kind"}
    assert names["kind"].domain.widths() == [3]
    (steps,) = framework.inputs(load_program("directed_inputs.py:unbounded"))
    assert isinstance(steps.domain, IntDomain) and steps.bounds is None  # no Range: every int64, default first


def test_random_explores_bool_literal_and_enum_inputs_and_the_trace_replays(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = run_cli(
        "check", f"{PROGRAMS / 'directed_inputs.py'}:choices", "--strategy", "random",
        "--out", str(tmp_path), "--json", str(report),
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "inputs: mode='LAZY', flag=True, kind='c'" in done.stdout
    (bug,) = json.loads(report.read_text())["bugs"]
    assert bug["inputs"] == {"mode": "LAZY", "flag": True, "kind": "c"}
    trace = json.loads(Path(bug["trace"]).read_text())
    assert trace["inputs"] == bug["inputs"] and trace["pinned"] == []
    assert sum(1 for choice in trace["choices"] if choice[0] == "input") == 3
    replayed = run_cli("replay", bug["trace"])
    assert replayed.returncode == 1 and "reproduced" in replayed.stdout


def test_an_input_pinned_on_the_command_line_is_not_explored(tmp_path: Path) -> None:
    target = f"{PROGRAMS / 'directed_inputs.py'}:choices"
    assert run_cli("check", target, "--strategy", "random", "--input", "kind=b", "--budget", "300", "--out", str(tmp_path)).returncode == 0
    pinned = run_cli(
        "check", target, "--input", "kind=c", "--input", "mode=LAZY", "--input", "flag=true",
        "--budget", "1", "--out", str(tmp_path),
    )
    assert pinned.returncode == 1, pinned.stdout + pinned.stderr
    trace = json.loads(next(tmp_path.glob("bug-*.json")).read_text())
    assert sorted(trace["pinned"]) == ["flag", "kind", "mode"]
    assert run_cli("replay", str(next(tmp_path.glob("bug-*.json")))).returncode == 1


@pytest.mark.parametrize(
    "given, message",
    [
        ("kind=d", "outside the input's domain"),
        ("nothing=1", "has no input 'nothing'"),
        ("flag=maybe", "not a valid bool"),
        ("kind", "not of the form NAME=VALUE"),
    ],
)
def test_a_bad_input_option_is_bad_input(given: str, message: str, tmp_path: Path) -> None:
    done = run_cli("check", f"{PROGRAMS / 'directed_inputs.py'}:choices", "--input", given, "--out", str(tmp_path))
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_an_input_drawn_from_a_hypothesis_strategy_is_explored_and_replays(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    done = run_cli(
        "check", f"{PROGRAMS / 'directed_inputs.py'}:drawn", "--strategy", "random", "--budget", "500",
        "--out", str(tmp_path), "--json", str(report),
    )
    assert done.returncode == 1, done.stdout + done.stderr
    (bug,) = json.loads(report.read_text())["bugs"]
    assert bug["inputs"] == {"words": ["b", "b", "b"]}
    assert run_cli("replay", bug["trace"]).returncode == 1
