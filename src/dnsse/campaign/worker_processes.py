"""The worker processes of a parallel campaign: started, heard, replaced when they die, stopped.

Each worker has a pipe of its own to the parent and writes each report into
it before its next execution starts, so a worker that dies (a segfault,
``os._exit``, a fatal signal, the out-of-memory killer) has delivered every
report of the executions it finished, and can corrupt no other worker's
channel: a queue shared by all workers would be left locked by a writer that
died holding its lock. For the same reason the stop flag is a byte of shared
memory, read and written without a lock. A dead worker's pipe reads as
closed; :meth:`WorkerProcesses.death` then says how it died and in which execution
(see :mod:`dnsse.campaign.worker_death`), and :meth:`WorkerProcesses.start` puts a
fresh process in its place.

A pool made with ``inbox=True`` also gives each worker a pipe of its own
from the parent (:meth:`WorkerProcesses.send`), read only by that worker: a
worker that dies takes nothing of another's with it.

Workers are forked from a fork server (:mod:`dnsse.campaign.fork_server`),
so a worker starts in milliseconds instead of importing torch anew, and each
worker is still a fresh process: its death is seen as above.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import multiprocessing
import shutil
import tempfile
import time
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Callable, Iterator, Sequence

from dnsse.campaign.fork_server import sigint_blocked, start_fork_server, start_method
from dnsse.campaign.worker_death import Death, WorkerFiles, death_of

# How often a parent looks at its workers while no report arrives.
POLL_S = 0.2
# How long stopped workers may take to finish their execution before they are terminated.
GRACE_S = 3.0
# How long a worker whose pipe closed may take to be reaped.
REAP_S = 5.0

# A worker's body: (its settings as JSON, the writing end of its pipe, the shared stop flag[, its inbox]).
Body = Callable[..., None]


class WorkerProcesses:
    """Worker processes running ``body``; ``settings(worker, start, files)`` says what each one runs."""

    def __init__(self, body: Body, settings: Callable[[int, int, WorkerFiles], str], inbox: bool = False) -> None:
        self._context = multiprocessing.get_context(start_method())
        self._body = body
        self._settings = settings
        self._inbox = inbox
        self._inboxes: dict[int, Connection] = {}
        self.stop = self._context.RawValue(ctypes.c_bool, False)
        self.directory = Path(tempfile.mkdtemp(prefix="dnsse-workers-"))
        self._processes: dict[int, BaseProcess] = {}
        self._pipes: dict[int, Connection] = {}
        self._ended: list[BaseProcess] = []

    def files(self, worker: int) -> WorkerFiles:
        return WorkerFiles.of(self.directory, worker)

    def start(self, worker: int, start: int) -> None:
        """Start (or restart) worker ``worker`` at execution index ``start``."""
        files = self.files(worker)
        for path in (files.flight, files.faults):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        reader, writer = self._context.Pipe(duplex=False)
        arguments: tuple = (self._settings(worker, start, files), writer, self.stop)
        if self._inbox:
            inbox, self._inboxes[worker] = self._context.Pipe(duplex=False)
            arguments += (inbox,)
        process = self._context.Process(
            target=self._body,
            args=arguments,
            name=f"dnsse-worker-{worker}",
            # If the parent dies without cleaning up, multiprocessing still ends its daemons.
            daemon=True,
        )
        with sigint_blocked():
            if self._context.get_start_method() == "forkserver":
                start_fork_server()
            process.start()
        writer.close()  # the worker holds the only writing end: its death closes the pipe
        if self._inbox:
            inbox.close()  # and the only reading end of its inbox
        self._processes[worker] = process
        self._pipes[worker] = reader

    def send(self, worker: int, message: object) -> None:
        """Put ``message`` (JSON) in worker ``worker``'s inbox; a worker that died is heard of on its pipe."""
        inbox = self._inboxes.get(worker)
        if inbox is None:
            return
        try:
            inbox.send_bytes(json.dumps(message).encode())
        except OSError:  # BrokenPipeError: its reading end died with it
            pass

    def receive(self, timeout: float, ends: Sequence[BaseProcess] = ()) -> Iterator[tuple[int, dict | None]]:
        """The messages that arrived within ``timeout``, by worker; ``None``: that worker's pipe closed.

        The wait also ends when one of the processes ``ends`` exits.
        """
        ready = wait([*self._pipes.values(), *(process.sentinel for process in ends)], timeout=timeout)
        for worker, pipe in list(self._pipes.items()):
            if pipe not in ready:
                continue
            try:
                yield worker, json.loads(pipe.recv_bytes())
            except (EOFError, OSError, ValueError):
                # Closed, or a report cut short by the writer's death.
                yield worker, None

    def release(self, worker: int) -> None:
        """Worker ``worker`` said it is done: stop listening to it (it is joined at shutdown)."""
        self._pipes.pop(worker).close()
        self._close_inbox(worker)
        self._ended.append(self._processes.pop(worker))

    def death(self, worker: int) -> Death:
        """Worker ``worker``'s pipe closed without its saying it was done: how it died."""
        process = self._processes.pop(worker)
        self._pipes.pop(worker).close()
        self._close_inbox(worker)
        process.join(timeout=REAP_S)
        if process.is_alive():  # it closed its end but lives on: it is of no use any more
            process.kill()
            process.join()
        return death_of(worker, process.exitcode, self.files(worker))

    def shut_down(self) -> None:
        """Stop the workers, give them a grace period to finish, then terminate the rest; join all."""
        self.stop.value = True
        running = list(self._processes.values()) + self._ended
        try:
            until = time.perf_counter() + GRACE_S
            while (alive := [process for process in running if process.is_alive()]) and time.perf_counter() < until:
                # A worker blocked on a full pipe finishes its report once the parent reads it; one that
                # exits ends the wait at once (a campaign that ran its budget waits for nothing else).
                for worker, message in self.receive(timeout=0.1, ends=alive):
                    if message is None:
                        self._pipes.pop(worker).close()
        finally:
            for process in running:
                if process.is_alive():
                    process.terminate()
            for process in running:
                process.join(timeout=GRACE_S)
                if process.is_alive():
                    process.kill()
                    process.join()
            for pipe in self._pipes.values():
                pipe.close()
            for worker in list(self._inboxes):
                self._close_inbox(worker)
            shutil.rmtree(self.directory, ignore_errors=True)

    def _close_inbox(self, worker: int) -> None:
        inbox = self._inboxes.pop(worker, None)
        if inbox is not None:
            inbox.close()
