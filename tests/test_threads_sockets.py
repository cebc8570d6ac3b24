"""Blocking sockets between a threads program's own threads: as real sockets do, and controlled waits.

Before, a blocking ``accept``/``recv`` stopped the OS thread every agent
shares until the wall-clock limit: inconclusive. Each program of
``socket_threads.py`` prints what it saw; it runs here under plain Python
(real sockets on 127.0.0.1) and under dnsse, and the lines must agree.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import PROGRAMS, SeededChooser, controlled

from dnsse.engine.bugs import BugKind

PROGRAM = "socket_threads.py"


def plain_lines(function: str) -> list[str]:
    spec = importlib.util.spec_from_file_location("socket_threads_plain", PROGRAMS / PROGRAM)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        getattr(module, function)()
    return printed.getvalue().splitlines()


@pytest.mark.parametrize("function", ["echo", "files", "refused_and_timeout", "unix_path"])
def test_sockets_between_threads_behave_as_real_ones_in_every_schedule(function: str) -> None:
    expected = plain_lines(function)
    with controlled(f"{PROGRAM}:{function}") as run:
        for seed in range(4):
            result = run(SeededChooser(seed))
            assert result.bug is None and result.inconclusive is None, (seed, result.bug and result.bug.details)
            assert [line for _, _, line in result.output.lines()] == expected, seed


def test_threads_that_both_wait_to_receive_are_a_deadlock_naming_each_socket() -> None:
    with controlled(f"{PROGRAM}:missing_send") as run:
        result = run(SeededChooser(0))
    assert result.bug is not None and result.bug.kind == BugKind.DEADLOCK
    report = "\n".join(result.bug.details)
    assert "main waits for bytes on socket#2 (created at socket_threads.py:89)" in report
    assert "(socket.recv) at " in report and "socket_threads.py:87 in <lambda>" in report


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("serve_outsiders", "socket.accept() on ('127.0.0.1', 32768) is not under control yet: once no thread"),
        ("real_host", "socket.connect to '192.0.2.1' is not under control yet (called at "),
        ("selected", "socket.fileno of a modelled socket is not under control yet (called at "),
    ],
)
def test_waiting_for_outside_clients_or_a_real_host_is_exit_2(function: str, message: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", f"{PROGRAMS / PROGRAM}:{function}", "--budget", "5",
         "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stdout + done.stderr and "inconclusive" not in done.stdout


def test_the_order_in_which_clients_connect_is_explored_and_its_bug_replays(tmp_path: Path, capsys) -> None:
    from dnsse.cli import main

    status = main(["check", f"{PROGRAMS / PROGRAM}:accept_order", "--strategy", "dfs", "--budget", "200",
                   "--out", str(tmp_path)], contained=False)
    assert status == 1
    assert "AssertionError: clients accepted in the order [2, 1]" in capsys.readouterr().out
    assert main(["replay", str(tmp_path / "bug-1.json")], contained=False) == 1
    assert "reproduced" in capsys.readouterr().out
