"""Every option is checked before work starts: exit 2 with a message, never a traceback or a false verdict."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_cli import output, run_cli, target

SIGNALS = target("signals.py:main")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--world-size", "1000000000"], "--world-size 1000000000 is more than dnsse allows"),
        (["--world-size", "100000"], "--world-size 100000 is more than dnsse allows"),
        (["--world-size", "0"], "--world-size must be at least 1"),
        (["--budget", "0"], "--budget must be at least 1"),
        (["--budget", "1000000000000"], "--budget 1000000000000 is more than dnsse allows"),
        (["--time-budget", "0"], "--time-budget must be more than 0"),
        (["--time-budget", "-5"], "--time-budget must be more than 0"),
        (["--time-budget", "nan"], "--time-budget must be a finite number"),
        (["--execution-timeout", "nan"], "--execution-timeout must be a finite number"),
        (["--execution-timeout", "inf"], "--execution-timeout must be a finite number"),
        (["--execution-timeout", "0"], "--execution-timeout must be more than 0"),
        (["--max-steps", "0"], "--max-steps must be at least 1"),
        (["--max-steps", "10000000000"], "--max-steps 10000000000 is more than dnsse allows"),
        (["--workers", "100000"], "--workers 100000 is more than dnsse allows"),
        (["--pct-depth", "0"], "--pct-depth must be at least 1"),
    ],
)
def test_an_out_of_range_number_is_refused_before_any_execution(options: list[str], message: str) -> None:
    result = run_cli("check", SIGNALS, *options)
    assert result.returncode == 2, output(result)
    assert message in result.stderr
    assert "Traceback" not in output(result) and "executions" not in result.stdout


def test_out_naming_a_file_is_refused_up_front(tmp_path: Path) -> None:
    existing = tmp_path / "a-file"
    existing.write_text("keep me")
    result = run_cli("check", SIGNALS, "--out", str(existing))
    assert result.returncode == 2, output(result)
    assert "is a file, not a directory" in result.stderr
    assert existing.read_text() == "keep me"


def test_json_naming_a_directory_is_refused_before_the_campaign(tmp_path: Path) -> None:
    result = run_cli("check", SIGNALS, "--json", str(tmp_path), "--out", str(tmp_path / "traces"))
    assert result.returncode == 2, output(result)
    assert "--json" in result.stderr and "is a directory" in result.stderr
    assert "checking" not in result.stdout


def test_json_below_a_file_is_refused_before_the_campaign(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    result = run_cli("check", SIGNALS, "--json", str(blocker / "report.json"), "--out", str(tmp_path / "t"))
    assert result.returncode == 2, output(result)
    assert "cannot write" in result.stderr and "checking" not in result.stdout


@pytest.mark.parametrize(
    "formula",
    ["!" * 1000 + "a", "X " * 1000 + "a", "a & " * 1000 + "a", "(" * 1000 + "a" + " | b)" * 1000],
)
def test_a_spec_nested_a_thousand_deep_is_bad_input(formula: str, tmp_path: Path) -> None:
    # In a directory of its own: a refused spec still leaves the default --out directory behind.
    result = run_cli("check", SIGNALS, "--spec", formula, "--budget", "3", cwd=tmp_path)
    assert result.returncode == 2, output(result)
    assert "deep" in result.stderr and "Traceback" not in output(result)


def test_a_huge_spec_is_bad_input(tmp_path: Path) -> None:
    result = run_cli("check", SIGNALS, "--spec", " | ".join(["a"] * 10_000), "--budget", "3", cwd=tmp_path)
    assert result.returncode == 2, output(result)
    assert "longer than dnsse reads" in result.stderr
