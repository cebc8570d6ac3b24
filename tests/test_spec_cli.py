"""``dnsse check --spec`` / ``--spec-file`` and ``dnsse replay`` of a spec violation, as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROGRAMS = Path(__file__).parent / "programs"
SERVE = f"{PROGRAMS / 'spec_threads.py'}:serve_and_train"


def run_cli(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dnsse.cli", *arguments], capture_output=True, text=True, timeout=600
    )


def test_a_spec_violated_under_some_schedules_is_found_and_replayed(tmp_path: Path) -> None:
    spec = "G (serve -> O train)"
    found = run_cli(
        "check", SERVE, "--spec", spec, "--strategy", "random", "--budget", "200",
        "--out", str(tmp_path), "--json", str(tmp_path / "report.json"),
    )
    assert found.returncode == 1, found.stdout + found.stderr
    assert "spec_violation at step" in found.stdout and f"{spec} is violated" in found.stdout
    assert "formula: G (serve -> O train)" in found.stdout
    assert "serve(version=0)" in found.stdout
    trace = tmp_path / "bug-1.json"
    assert json.loads(trace.read_text())["specs"] == [spec]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["bugs"][0]["kind"] == "spec_violation"
    replayed = run_cli("replay", str(trace))
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "reproduced:" in replayed.stdout and f"{spec} is violated" in replayed.stdout


def test_a_spec_that_holds_produces_no_report(tmp_path: Path) -> None:
    result = run_cli(
        "check", SERVE, "--spec", "G (serve(version=1) -> O train(version=1))", "--strategy", "random",
        "--budget", "40", "--out", str(tmp_path),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no bug found" in result.stdout
    assert not list(tmp_path.glob("bug-*.json"))


def test_a_malformed_spec_exits_2_with_the_formula_and_a_caret(tmp_path: Path) -> None:
    result = run_cli("check", SERVE, "--spec", "G (serve -> & train)", "--out", str(tmp_path))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "  G (serve -> & train)\n" + " " * (2 + len("G (serve -> ")) + "^" in result.stderr


def test_specs_come_from_a_spec_file(tmp_path: Path) -> None:
    specs = tmp_path / "serving.ltl"
    specs.write_text("# the server never answers with an untrained model\nG (serve -> O train)\n")
    found = run_cli(
        "check", SERVE, "--spec-file", str(specs), "--strategy", "random", "--budget", "200",
        "--out", str(tmp_path / "traces"),
    )
    assert found.returncode == 1, found.stdout + found.stderr
    assert "G (serve -> O train) is violated" in found.stdout


def test_a_malformed_spec_file_line_is_named(tmp_path: Path) -> None:
    specs = tmp_path / "bad.ltl"
    specs.write_text("G !bad\nG (serve ->\n")
    result = run_cli("check", SERVE, "--spec-file", str(specs), "--out", str(tmp_path))
    assert result.returncode == 2
    assert f"{specs}:2:" in result.stderr and "^" in result.stderr


def test_a_target_states_its_own_specs(tmp_path: Path) -> None:
    found = run_cli(
        "check", f"{PROGRAMS / 'spec_declared.py'}:main", "--strategy", "random", "--budget", "200",
        "--out", str(tmp_path),
    )
    assert found.returncode == 1, found.stdout + found.stderr
    assert "G (serve -> O train) is violated" in found.stdout
