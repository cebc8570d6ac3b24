"""Worker processes start from a fork server that imported what they need, and their deaths are still seen."""

from __future__ import annotations

import json
import os
import signal
import sys
from multiprocessing.connection import Connection

import pytest
import torch  # noqa: F401 - the parent has torch, so the fork server imports it once for every worker

from dnsse.search.worker_pool import WorkerPool, start_fork_server, start_method

pytestmark = pytest.mark.skipif(start_method() != "forkserver", reason="no fork server on this platform")


def _ready(settings: str, pipe: Connection, stop: object) -> None:
    """A worker body that says what it found imported when it started, then waits to be stopped."""
    pipe.send_bytes(json.dumps({"torch": "torch" in sys.modules, "dnsse": "dnsse.search.worker_pool" in sys.modules}).encode())
    if settings == "crash":
        os.kill(os.getpid(), signal.SIGSEGV)
    pipe.close()
    os._exit(0)


def _pool(settings: str) -> WorkerPool:
    return WorkerPool(_ready, lambda worker, start, files: settings)


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
