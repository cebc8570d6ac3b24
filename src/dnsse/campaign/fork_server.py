"""The fork server worker processes are forked from: started once per process, as early as it can.

Workers are never forked from the campaign's process while it runs: it has
threads (torch's pools, agents of past executions unwinding) that a fork
would copy in whatever state they were in. They are forked from
multiprocessing's fork server instead, a process that runs nothing else, so
each worker is still a fresh process whose death is seen as before (its pipe
closes, the server reports its exit status or signal).

How the server gets the modules workers need (dnsse's, and torch when the
target needs it) decides what a campaign's start-up costs:

- in a process that has run nothing of a target yet (the command line's
  ``check`` says so with :func:`fork_this_process`), the first campaign
  forks the server from this process once the target's framework is
  imported and before the target runs: the server has imported all of it
  already, so the first worker starts in milliseconds. Only libraries'
  idle pools started at import may have threads then (OpenBLAS, which
  stops them around a fork); torch's OpenMP pool, which a fork leaves
  hanging in the child, starts with the first tensor operation of an
  execution, and this process has run none. It is not forked while another
  Python thread runs, with a CUDA context (useless in a child) or with a
  Ray connection;
- otherwise (a process that ran campaigns before, a Ray worker) it is
  multiprocessing's own server, a fresh interpreter that imports those
  modules before it forks the first worker (torch: a few seconds).

Either way the server is started with SIGINT blocked, which its workers
inherit, so Ctrl-C reaches the parent only, and a later campaign of this
process reuses it. Where there is no fork server (not POSIX), or its socket's
path would be too long, workers are spawned (:func:`start_method`).
"""

from __future__ import annotations

import contextlib
import faulthandler
import gc
import multiprocessing
import os
import signal
import socket
import sys
import tempfile
import threading
from typing import Iterator

# Whether this process has run nothing of a target, so the next server may be this process forked.
_fresh = False


def fork_this_process() -> None:
    """Say that this process has run nothing of a target yet: its first campaign forks the server from it."""
    global _fresh
    _fresh = True


def start_method() -> str:
    if "forkserver" in multiprocessing.get_all_start_methods() and _server_address_fits():
        return "forkserver"
    return "spawn"


# The server listens on a Unix socket, ``pymp-XXXXXXXX/listener-XXXXXXXX`` under the temporary directory;
# a longer path than the OS takes (107 bytes on Linux, 103 on macOS) would fail its start, so under a
# deep TMPDIR workers are spawned instead (slower to start, as where there is no fork server).
_ADDRESS_LIMIT = 103
_ADDRESS_SUFFIX = len("/pymp-XXXXXXXX/listener-XXXXXXXX")


def _server_address_fits() -> bool:
    return len(os.fsencode(tempfile.gettempdir())) + _ADDRESS_SUFFIX <= _ADDRESS_LIMIT


def start_fork_server() -> None:
    """Start the fork server workers are forked from, if it is not running (see the module's text)."""
    if start_method() != "forkserver":
        return
    from multiprocessing import forkserver

    global _fresh
    forkable, _fresh = _fresh and _forkable(), False  # once: a later campaign comes after executions
    with sigint_blocked():
        if forkable:
            _fork_this_process(forkserver._forkserver)
            return
        modules = sorted(
            name for name in sys.modules if name.split(".")[0] in ("dnsse", "torch", "numpy") and "._" not in name
        )
        multiprocessing.get_context("forkserver").set_forkserver_preload(modules)  # applies when the server starts
        forkserver.ensure_running()


def _forkable() -> bool:
    """Whether a fresh process may be forked now: no other Python thread, CUDA context or Ray connection."""
    if threading.current_thread() is not threading.main_thread() or threading.active_count() != 1:
        return False
    torch, ray = sys.modules.get("torch"), sys.modules.get("ray")
    if torch is not None and torch.cuda.is_initialized():
        return False
    return ray is None or not ray.is_initialized()


def _fork_this_process(server: object) -> None:
    """``ForkServer.ensure_running``, with this process forked as the server instead of a fresh interpreter.

    It fills in the same fields of multiprocessing's fork server as
    ``ensure_running`` (the socket's address, the write end of the pipe
    whose closing stops the server, its pid), so that forking a worker and
    hearing of its exit go through multiprocessing's own code, unchanged.
    """
    from multiprocessing import connection, resource_tracker, util

    with server._lock:  # type: ignore[attr-defined]
        resource_tracker.ensure_running()  # workers are handed its pipe, as by ensure_running
        if server._forkserver_pid is not None:  # type: ignore[attr-defined]
            pid, _ = os.waitpid(server._forkserver_pid, os.WNOHANG)  # type: ignore[attr-defined]
            if not pid:
                return  # still running
            os.close(server._forkserver_alive_fd)  # type: ignore[attr-defined]
        with socket.socket(socket.AF_UNIX) as listener:
            address = connection.arbitrary_address("AF_UNIX")
            listener.bind(address)
            if not util.is_abstract_socket_namespace(address):
                os.chmod(address, 0o600)
            listener.listen()
            alive_r, alive_w = os.pipe()
            for stream in (sys.stdout, sys.stderr):  # or workers would write what is buffered here once more
                with contextlib.suppress(Exception):
                    stream.flush()
            pid = os.fork()
            if pid == 0:
                os.close(alive_w)  # its clients hold the write end; when they all closed it, it stops
                _serve(listener.fileno(), alive_r)
            os.close(alive_r)
        server._forkserver_address = address  # type: ignore[attr-defined]
        server._forkserver_alive_fd = alive_w  # type: ignore[attr-defined]
        server._forkserver_pid = pid  # type: ignore[attr-defined]


def _serve(listener_fd: int, alive_r: int) -> None:
    """The forked server: signal handlers as a fresh interpreter has them, then multiprocessing's loop; never returns.

    A handler this process installed (the command line's, which saves the
    campaign on SIGTERM) must not run in a worker the pool terminates, nor
    may a worker's fatal signal be written to this process's fault log.
    """
    from multiprocessing import forkserver

    try:
        faulthandler.disable()
        for number in signal.valid_signals():
            handler = signal.getsignal(number)
            if callable(handler) and handler is not signal.default_int_handler:
                signal.signal(number, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        # Every object this process holds goes to the collector's permanent generation: a worker's full
        # collections then traverse only what the worker made, not torch's and dnsse's modules (about
        # 0.1 s each), and writing their headers no longer copies the inherited pages one by one.
        gc.freeze()
        forkserver.main(listener_fd, alive_r, [])
    finally:
        os._exit(0)  # nothing of this process's own exit (atexit, finalizers) is the server's


@contextlib.contextmanager
def sigint_blocked() -> Iterator[None]:
    """Start workers with SIGINT blocked (they inherit the mask), so Ctrl-C stops them through the parent.

    Blocked, not ignored: a Ctrl-C that comes while a worker starts stays
    pending here and reaches the parent's handler once unblocked.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread handles signals; a campaign run from another thread keeps them as they are
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
