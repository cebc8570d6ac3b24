"""asyncio servers and connections on the loopback network: as plain asyncio on real sockets, and never a false bug.

Each program of ``asyncio_network_programs.py`` prints what it saw; it runs
here under plain asyncio (real sockets on 127.0.0.1) and under dnsse with
several schedules, and the lines must agree. I/O the controlled loop does
not model is exit 2 naming it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import io
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import PROGRAMS, SeededChooser, controlled

from dnsse.engine.bugs import BugKind
from dnsse.engine.limits import Limits
from dnsse.frameworks.threads.event_loop import ControlledLoop

PROGRAM = "asyncio_network_programs.py"
ECHO = PROGRAMS.parent / "real_programs" / "asyncio_echo_server.py"


def plain_lines(function: str, program: Path = PROGRAMS / PROGRAM) -> list[str]:
    spec = importlib.util.spec_from_file_location("asyncio_network_plain", program)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        getattr(module, function)()
    return printed.getvalue().splitlines()


def sides(lines: list[str]) -> tuple[list[str], ...]:
    """A protocol's callbacks in order for each side; how the two sides interleave is the loop's business."""
    def side(line: str) -> str:
        first = line.split(" ")[0]
        return first if first in ("server", "client") else "program"

    return tuple([line for line in lines if side(line) == name] for name in ("server", "client", "program"))


@pytest.mark.parametrize(
    "function",
    [
        "protocols", "streams_until_eof", "reset_by_peer", "serve_forever_until_cancelled", "port_in_use", "unix_socket",
        "loops_of_two_threads", "unix_files", "buffered",
    ],
)
def test_servers_and_connections_behave_as_on_real_sockets_in_every_schedule(function: str) -> None:
    expected = sides(plain_lines(function))
    # With no pause of the process (--max-delay 0), as in the plain run compared with: ``buffered`` waits
    # for the server with a 0.01 s sleep, which a longer pause lets expire first (a real timing race).
    with controlled(f"{PROGRAM}:{function}", limits=Limits(max_delay=0.0)) as run:
        for seed in range(4):
            result = run(SeededChooser(seed))
            assert result.bug is None, (seed, result.bug and result.bug.details)
            assert sides([line for _, _, line in result.output.lines()]) == expected, seed


@pytest.mark.parametrize("function", ["echo", "refused"])
def test_the_documentations_echo_server_and_a_refused_connection_print_what_plain_asyncio_prints(
    function: str,
) -> None:
    expected = sorted(plain_lines(function, ECHO))
    with controlled(f"../real_programs/{ECHO.name}:{function}") as run:
        for seed in range(4):
            result = run(SeededChooser(seed))
            assert result.bug is None, (seed, result.bug and result.bug.details)
            assert sorted(line for _, _, line in result.output.lines()) == expected, seed


def test_a_client_and_a_handler_that_both_wait_to_read_are_a_deadlock_naming_where() -> None:
    with controlled(f"{PROGRAM}:both_wait") as run:
        result = run(SeededChooser(0))
    assert result.bug is not None and result.bug.kind == BugKind.DEADLOCK
    report = "\n".join(result.bug.details)
    assert "(_both_wait) waits for StreamReader._wait_for_data() at asyncio_network_programs.py" in report
    assert "(_silent) waits for StreamReader._wait_for_data() at asyncio_network_programs.py" in report


@pytest.mark.parametrize(
    ("function", "api"),
    [
        ("subprocess", "asyncio loop.subprocess_exec is not under control yet (called at "),
        ("add_reader", "asyncio loop.add_reader is not under control yet (called at "),
        ("real_network", "loop.create_connection to '192.0.2.1' is not under control yet (called at "),
        # The documentation's server alone: it waits for clients from outside, which is no deadlock of its own.
        ("serve_alone", "asyncio Server.serve_forever() on ('127.0.0.1', 32768) is not under control yet: "),
    ],
)
def test_io_outside_the_model_is_exit_2_naming_the_api(function: str, api: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", f"{PROGRAMS / PROGRAM}:{function}", "--budget", "5",
         "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert api in done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert "found a bug" not in done.stdout and not list(tmp_path.glob("bug-*.json"))


def test_every_io_method_of_a_selector_loop_is_modelled_or_refused_never_not_implemented() -> None:
    loop_class = getattr(asyncio, "SelectorEventLoop")
    public = [name for name in dir(loop_class) if not name.startswith("_") and callable(getattr(loop_class, name))]
    abstract = [name for name in public if getattr(ControlledLoop, name) is getattr(asyncio.AbstractEventLoop, name, 0)]
    assert not abstract
    # BaseEventLoop's versions of these end in a transport factory only a selector loop has.
    ending_in_not_implemented = [
        "subprocess_exec", "subprocess_shell", "connect_read_pipe", "connect_write_pipe", "create_datagram_endpoint",
        "connect_accepted_socket", "start_tls", "sendfile", "sock_sendfile", "create_server", "create_connection",
    ]
    inherited = [name for name in ending_in_not_implemented
                 if getattr(ControlledLoop, name) is getattr(asyncio.BaseEventLoop, name)]
    assert not inherited
