"""What the command says about its own use, and the summary a run ends with.

Usage errors are one line with exit 2 (a near miss gets "did you mean"),
`--version` and `check --help` answer, and the summary of a run is a few
lines: the engines' and advisors' lines come with --verbose only.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import dnsse
from dnsse.cli import main

PROGRAMS = Path(__file__).parent / "programs"
COUNTER = f"{PROGRAMS}/threads_counter.py:unlocked"


def run_cli(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "dnsse", *arguments], capture_output=True, text=True, timeout=600)


def test_version_names_the_package_version() -> None:
    done = run_cli("--version")
    assert done.returncode == 0
    assert done.stdout.strip() == f"dnsse {dnsse.__version__}"


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["check", COUNTER, "--budgt", "5"], "unknown option --budgt (did you mean --budget?)"),
        (["check", COUNTER, "--keep-giong"], "unknown option --keep-giong (did you mean --keep-going?)"),
        (["check", COUNTER, "--strategy", "rnadom"], "unknown --strategy 'rnadom'; choose one of hybrid, random"),
        (["check", COUNTER, "--strategy", "rnadom"], "(did you mean random?)"),
        (["check", COUNTER, "--framework", "trch"], "(did you mean torch?)"),
        (["chek", COUNTER], "unknown command 'chek'; choose one of check, replay, report (did you mean check?)"),
        (["replay", "t.json", "--forse"], "unknown option --forse (did you mean --force?)"),
        (["check", COUNTER, "--budget", "1e3"], "--budget takes a whole number, not '1e3' (write --budget 1000)"),
        (["check", COUNTER, "--budget", "1.5"], "--budget takes a whole number, not '1.5'"),
        (["check", "app.py", "--epochs", "3"], "the program's own arguments go after `--`"),
    ],
)
def test_a_usage_error_is_one_line_with_exit_two(arguments: list[str], said: str) -> None:
    done = run_cli(*arguments)
    assert done.returncode == 2, done.stdout + done.stderr
    assert said in done.stderr
    # One line: no page of usage before it, no traceback.
    assert done.stderr.count("\n") == 1, done.stderr
    assert "usage:" not in done.stderr and "Traceback" not in done.stderr


def test_an_option_far_from_every_known_one_gets_no_guess() -> None:
    done = run_cli("check", COUNTER, "--strategy", "zzz")
    assert done.returncode == 2
    assert "unknown --strategy 'zzz'" in done.stderr and "did you mean" not in done.stderr


def test_the_strategy_of_the_python_api_is_checked_with_a_guess_too() -> None:
    from dnsse.errors import BadInput
    from dnsse.search.registry import make_strategy

    with pytest.raises(BadInput, match=r"unknown strategy 'hybird'.*\(did you mean hybrid\?\)"):
        make_strategy("hybird", seed=0)


def test_check_help_shows_the_target_forms_the_entry_signatures_and_examples() -> None:
    done = run_cli("check", "--help")
    assert done.returncode == 0
    text = done.stdout
    assert "-- torchrun --nproc-per-node 2 train.py ARGS" in text
    assert "app.py [-- ARGS]" in text and "app.py:main" in text
    assert "main(rank, world_size, **inputs)" in text and "ray, threads:  main(**inputs)" in text
    assert "examples:" in text and "dnsse replay .dnsse/bug-1.json" in text
    epilog = text[text.index("the program to check"):]
    assert max(len(line) for line in epilog.splitlines()) <= 80


def _summary(out: str) -> list[str]:
    """The lines after the last bug's replay command (or the whole output of a clean run)."""
    tail = out.split("replay: dnsse replay")[-1]
    return [line for line in tail.splitlines()[1:] if line.strip()]


def test_the_summary_is_short_and_counts_in_good_grammar(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    status = main(
        ["check", f"{PROGRAMS}/threads_lock_order.py:main", "--out", str(tmp_path), "--budget", "50"],
        contained=False,
    )
    assert status == 1
    summary = _summary(capsys.readouterr().out)
    assert 1 <= len(summary) <= 4, summary
    counts = re.match(r"1 bug in (\d+) execution(s?) \(", summary[0])
    assert counts is not None, summary[0]
    assert (counts.group(2) == "") == (counts.group(1) == "1")
    assert not any(line.startswith("  symbolic:") or line.startswith("advisor ") for line in summary)


def test_verbose_adds_what_each_engine_and_advisor_contributed(tmp_path: Path, capsys) -> None:
    status = main(
        ["check", f"{PROGRAMS}/threads_lock_order.py:main", "--out", str(tmp_path), "--budget", "50", "--verbose"],
        contained=False,
    )
    assert status == 1
    summary = _summary(capsys.readouterr().out)
    assert any(line.startswith("  symbolic: ") for line in summary), summary
    assert any(line.startswith("advisor offline: ") for line in summary), summary


def test_a_target_without_branches_has_no_coverage_percentage(tmp_path: Path, capsys) -> None:
    program = tmp_path / "straight.py"
    program.write_text(
        "import threading\n\n\ndef main():\n    worker = threading.Thread(target=len, args=((),))\n"
        "    worker.start()\n    worker.join()\n"
    )
    status = main(
        ["check", f"{program}:main", "--strategy", "random", "--coverage", "--budget", "3", "--out", str(tmp_path / "o"),
         "--junit", str(tmp_path / "r.xml")], contained=False
    )
    assert status == 0
    out = capsys.readouterr().out
    assert "no bug found: 0 bugs in 3 executions" in out
    assert "branch coverage of the target: 0/0 (n/a)" in out and "100.0%" not in out
    assert 'name="coverage" value="n/a"' in (tmp_path / "r.xml").read_text()
