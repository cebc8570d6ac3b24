"""Worker processes start from a fork server that imported what they need, and their deaths are still seen."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
from multiprocessing.connection import Connection

import pytest
import torch  # noqa: F401 - the parent has torch, so the fork server imports it once for every worker

from dnsse.campaign.fork_server import start_fork_server, start_method
from dnsse.campaign.worker_processes import WorkerProcesses

pytestmark = pytest.mark.skipif(start_method() != "forkserver", reason="no fork server on this platform")


def _ready(settings: str, pipe: Connection, stop: object) -> None:
    """A worker body that says what it found imported when it started, then waits to be stopped."""
    pipe.send_bytes(json.dumps({"torch": "torch" in sys.modules, "dnsse": "dnsse.campaign.worker_processes" in sys.modules}).encode())
    if settings == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    pipe.close()
    os._exit(0)


def _pool(settings: str) -> WorkerProcesses:
    return WorkerProcesses(_ready, lambda worker, start, files: settings)


def test_a_worker_starts_with_torch_and_dnsse_already_imported() -> None:
    start_fork_server()
    pool = _pool("ok")
    try:
        pool.start(0, 0)
        messages = []
        while not messages:
            messages = [message for _, message in pool.receive(5.0)]
        assert messages == [{"torch": True, "dnsse": True}]
    finally:
        pool.shut_down()


def test_a_worker_forked_from_the_server_that_dies_is_seen_with_its_signal() -> None:
    pool = _pool("crash")
    try:
        pool.start(0, 0)
        heard: list = []
        while None not in heard:
            heard += [message for _, message in pool.receive(5.0)]
        assert heard[0] == {"torch": True, "dnsse": True}
        assert pool.death(0).exitcode == -signal.SIGSEGV
    finally:
        pool.shut_down()


# A process as the command line's check is when its campaign starts: torch imported, nothing run,
# a SIGTERM handler of its own. It prints what its worker found, and who forked the worker.
FRESH_PARENT = """
import json, os, signal, sys
import torch
from dnsse.campaign.fork_server import fork_this_process, start_fork_server
from dnsse.campaign.worker_processes import WorkerProcesses
from test_worker_start import _report

if __name__ == "__main__":  # a worker of multiprocessing's own server runs this file again
    import colorsys  # noqa: F401 - imported by this process only: a worker has it if it was forked from it
    signal.signal(signal.SIGTERM, lambda number, frame: None)
    if sys.argv[1] == "fresh":
        fork_this_process()
    start_fork_server()
    pool = WorkerProcesses(_report, lambda worker, start, files: "")
    pool.start(0, 0)
    messages = []
    while not messages:
        messages = [message for _, message in pool.receive(5.0)]
    pool.shut_down()
    print(json.dumps(dict(messages[0], parent=open("/proc/self/cmdline").read())))
"""


def _report(settings: str, pipe: Connection, stop: object) -> None:
    """A worker body that says what it inherited, and the command line of the server that forked it."""
    server = open(f"/proc/{os.getppid()}/cmdline").read()
    pipe.send_bytes(json.dumps({
        "torch": "torch" in sys.modules,
        "colorsys": "colorsys" in sys.modules,
        "sigterm_default": signal.getsignal(signal.SIGTERM) is signal.SIG_DFL,
        # The heap it inherited is frozen: its full collections traverse only what it makes.
        "frozen": gc.get_freeze_count(),
        "server": server,
    }).encode())
    pipe.close()
    os._exit(0)


def _run_parent(how: str, tmp_path) -> dict:
    script = tmp_path / "parent.py"
    script.write_text(FRESH_PARENT)
    tests = os.path.dirname(os.path.abspath(__file__))
    path = os.pathsep.join([tests, os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, str(script), how], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": path}
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads the server's command line from /proc")
def test_a_fresh_process_is_forked_as_the_server_and_its_workers_have_what_it_imported(tmp_path) -> None:
    found = _run_parent("fresh", tmp_path)
    # The server is the parent forked (its command line), not an interpreter that imported a list of modules.
    assert found["server"] == found["parent"]
    assert found["torch"] and found["colorsys"]
    # The parent's SIGTERM handler is not the worker's: the pool terminates workers with SIGTERM.
    assert found["sigterm_default"]
    assert found["frozen"] > 10_000  # torch's and dnsse's objects, at least


@pytest.mark.slow
@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads the server's command line from /proc")
def test_a_process_not_said_fresh_starts_multiprocessing_s_own_server_importing_dnsse_and_torch(tmp_path) -> None:
    found = _run_parent("not-fresh", tmp_path)
    assert "multiprocessing.forkserver" in found["server"] and found["server"] != found["parent"]
    assert found["torch"] and not found["colorsys"]
    assert found["sigterm_default"]


def test_building_the_torch_framework_imports_what_its_activation_patches() -> None:
    """So a worker forked after the framework is built (the fork server's) has them, instead of importing them."""
    program = (
        "import sys\n"
        "from dnsse.frameworks.base import framework_named\n"
        "from dnsse.frameworks.torch_dist.uncontrolled import REFUSED\n"
        "modules = sorted({entry.module for entry in REFUSED})\n"
        "before = [name for name in modules if name in sys.modules]\n"
        "framework_named('torch', 2)\n"
        "print(len(modules) - len(before), all(name in sys.modules for name in modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    missing_before, all_after = done.stdout.split()
    assert int(missing_before) > 0 and all_after == "True"
