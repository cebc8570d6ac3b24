"""Exit codes a CI job can trust: a failure of dnsse itself is 3, never 1 ("bug found")."""

from __future__ import annotations

from pathlib import Path

import pytest
from hostile_cli import target

from dnsse import cli


def _broken(arguments: object) -> None:
    raise RuntimeError("an invariant of dnsse broke")


def test_an_internal_error_exits_3_and_says_it_is_a_dnsse_bug(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # the default --out directory, if any, goes there
    monkeypatch.setattr(cli, "_validate", _broken)
    status = cli.main(["check", target("signals.py:main")])
    error = capsys.readouterr().err
    assert status == 3
    assert "internal error: RuntimeError: an invariant of dnsse broke" in error
    assert "This is a dnsse bug" in error and cli.REPORT_BUGS_AT in error
    assert "Traceback" not in error


def test_debug_shows_the_traceback_of_an_internal_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # the default --out directory, if any, goes there
    monkeypatch.setattr(cli, "_validate", _broken)
    status = cli.main(["--debug", "check", target("signals.py:main")])
    assert status == 3
    assert "Traceback" in capsys.readouterr().err
