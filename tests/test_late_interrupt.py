"""A Ctrl-C that arrives while a stopped campaign writes its summary does not cut the summary off.

Under supervision a Ctrl-C at the terminal reaches the campaign's process
twice: from the terminal, and passed on by the supervisor. On a loaded
machine the second copy can arrive after the campaign has stopped, while the
reports and the summary with its ``--resume`` hint are being written.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from dnsse import exit_codes
from dnsse.cli import _check, _parser
from dnsse.report.console import CheckConsole

PROGRAM = '''
import os
import signal
import threading


def main():
    with open(os.environ["RUNS_FILE"], "a") as runs:
        runs.write("x")
    if os.path.getsize(os.environ["RUNS_FILE"]) == 2:
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, in the second execution
    worker = threading.Thread(target=lambda: None)
    worker.start()
    worker.join()
'''


def test_a_second_ctrl_c_while_the_summary_is_written_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers are set in the main thread only")
    target = tmp_path / "program.py"
    target.write_text(PROGRAM)
    monkeypatch.setenv("RUNS_FILE", str(tmp_path / "runs"))
    finish = CheckConsole.finish

    def finish_after_a_late_copy(self: CheckConsole, result: object) -> object:
        os.kill(os.getpid(), signal.SIGINT)  # the supervisor's copy, late
        return finish(self, result)

    monkeypatch.setattr(CheckConsole, "finish", finish_after_a_late_copy)
    arguments = _parser().parse_args(
        ["check", f"{target}:main", "--strategy", "random", "--budget", "50", "--out", str(tmp_path / "out")]
    )
    try:
        status = _check(arguments)
    except KeyboardInterrupt:
        pytest.fail("the late Ctrl-C cut the summary off")
    assert status == exit_codes.INTERRUPTED
    assert "--resume" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
