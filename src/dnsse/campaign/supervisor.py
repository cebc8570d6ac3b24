"""Campaigns and replays in a supervised process: whatever the target does, dnsse reports it.

``dnsse check`` and ``dnsse replay`` run the same command again in a child
process (with ``DNSSE_SUPERVISED_DIR`` set) and watch it. The child runs its
executions in-process, the fast path, while a flight recorder
(:mod:`dnsse.engine.flight`) notes each execution's choices. This process
never runs the target, so nothing the target does can take it down:

- The child dies in an execution (a segfault, ``os._exit``, a fatal signal
  such as ``signal.alarm``'s, the out-of-memory killer): the death is a
  ``crash`` bug of that execution, with the signal or exit status, the agent
  that ran and its last scheduling point, and a trace of the recorded
  choices that replays it (also supervised). The campaign goes on in a fresh
  child that resumes it (``--keep-going``), or ends with the summary and the
  reports, as after any first bug.
- An execution left threads running that would not stop: the child saves
  the campaign and asks to be replaced (exit status ``RESTART``).
- Ctrl-C or SIGTERM: passed on to the child, which stops after its current
  execution and writes the summary and reports. A second one, or a child
  that does not stop in time, is killed; the summary is written from the
  saved state.

The child exits with ``os._exit`` (see ``dnsse.cli``): exit hooks that would
join a thread of the program (``concurrent.futures``) never run.
Cost: one process start per campaign (and per replacement), and a few bytes
written per choice; ``benchmarks/containment_cost.py`` measures it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterator

from dnsse import exit_codes
from dnsse.engine.bugs import Bug, BugKind
from dnsse.engine.memory import MEMORY_RETURNED, limit_memory
from dnsse.engine.flight import (
    RECORD_FILE,
    SUPERVISED_ENV,
    TEMPLATE_FILE,
    FlightRecord,
    read_flight_record,
    supervised_directory,
)
from dnsse.campaign.trace import Trace, read_trace, write_trace

# How long a child may take to finish its current execution once asked to stop, beyond its wall-clock limit.
STOP_GRACE_S = 10.0
FAULT_FILE = "faults"
# Written by the child as it exits by itself, with its status: an ``os._exit(3)`` of the program is no exit 3 of dnsse.
ENDED_FILE = "ended"
MAX_RESTARTS = 1000


class RestartNeeded(Exception):
    """An execution left threads running in this process; the campaign goes on in a fresh one (exit ``RESTART``)."""


@dataclass
class ChildEnd:
    """How a child process ended, with what its flight recorder held then."""

    status: int
    record: FlightRecord | None
    interrupted: int | None  # the signal this process passed on, if any
    killed: bool  # this process had to kill it
    # Whether dnsse in the child said it ends with ``status`` (see mark_ended): else the program ended it.
    ended: bool = False

    @property
    def crashed(self) -> bool:
        if self.killed:
            return False
        in_execution = self.record is not None and self.record.executing
        return in_execution or not self.ended or self.status not in exit_codes.OWN | {exit_codes.RESTART}


class Supervisor:
    """Runs ``python -m dnsse.cli ARGS`` in a child process, watched."""

    def __init__(self, arguments: list[str], stop_after_s: float, memory_limit: int | None = None) -> None:
        self.arguments = arguments
        self.stop_after_s = stop_after_s
        self.memory_limit = memory_limit
        self.directory = Path(tempfile.mkdtemp(prefix="dnsse-supervised-"))
        self.child: subprocess.Popen | None = None
        self.interrupted: int | None = None
        self._killed = False

    def close(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    def run(self, extra: list[str] = ()) -> ChildEnd:  # type: ignore[assignment]
        """Run the child to its end; Ctrl-C and SIGTERM are passed on to it."""
        for name in (RECORD_FILE, TEMPLATE_FILE, FAULT_FILE, ENDED_FILE):
            with contextlib.suppress(FileNotFoundError):
                (self.directory / name).unlink()
        self._killed = False
        relay = _needs_relay()
        # dnsse's own options go before a `--`: what follows it is the program's command.
        words = list(self.arguments)
        split = words.index("--") if "--" in words else len(words)
        self.child = subprocess.Popen(
            [sys.executable, "-m", "dnsse.cli", *words[:split], *extra, *words[split:]],
            env={**os.environ, SUPERVISED_ENV: str(self.directory), **MEMORY_RETURNED},
            stdout=subprocess.PIPE if relay else None,
            stderr=subprocess.PIPE if relay else None,
            preexec_fn=self._prepare_child,
        )
        relays = [_relay(self.child.stdout, sys.stdout), _relay(self.child.stderr, sys.stderr)] if relay else []
        with self._signals_passed_on():
            status = self._wait()
        for thread in relays:
            thread.join()
        record = read_flight_record(self.directory / RECORD_FILE)
        return ChildEnd(status, record, self.interrupted, self._killed, ended=_ended_with(self.directory, status))

    def _prepare_child(self) -> None:
        """In the child, before it runs: it dies with this process, and within its memory limit."""
        _die_with_parent()
        if self.memory_limit is not None:
            limit_memory(self.memory_limit)

    def fault_lines(self, source: str) -> list[str]:
        """What faulthandler wrote when the child died: its headline and the program's frames."""
        return read_fault_lines(self.directory / FAULT_FILE, source)

    def template(self) -> dict | None:
        try:
            return json.loads((self.directory / TEMPLATE_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def _wait(self) -> int:
        assert self.child is not None
        while True:
            try:
                timeout = self.stop_after_s if self.interrupted is not None else None
                return self.child.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._kill()

    def _kill(self) -> None:
        assert self.child is not None
        self._killed = True
        self.child.kill()

    @contextlib.contextmanager
    def _signals_passed_on(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def pass_on(signum: int, frame: object) -> None:
            if self.interrupted is not None:
                self._kill()  # asked twice: do not wait for the current execution
                return
            self.interrupted = signum
            # At a terminal the child got Ctrl-C too; a second one is harmless (it only sets a flag).
            if self.child is not None:
                with contextlib.suppress(ProcessLookupError):
                    self.child.send_signal(signum)

        previous = {sig: signal.signal(sig, pass_on) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def read_fault_lines(path: Path, source: str) -> list[str]:
    """What faulthandler wrote into ``path``: its headline and the frames in the file named ``source``."""
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return []
    headline = [line for line in lines[:1] if line.startswith("Fatal Python error")]
    frames = [line.strip() for line in lines if source in line]
    return headline + frames[:8]


def crash_bug(end: ChildEnd, fault_lines: list[str]) -> Bug:
    """The ``crash`` bug of a child that died in an execution."""
    status = end.status
    if status < 0:
        name = signal.Signals(-status).name
        description = signal.strsignal(-status) or name
        how = f"the process was killed by {name} ({description})"
        if -status == signal.SIGKILL:
            how += ", e.g. by the out-of-memory killer"
    else:
        how = f"the process exited with status {status} (os._exit, or an exit from native code)"
    record = end.record
    details = []
    if record is not None and record.agent is not None:
        details.append(f"{record.agent} was running, after its scheduling point {record.operation} (step {record.step})")
    details.extend(fault_lines)
    return Bug(
        BugKind.CRASH,
        how,
        details=details,
        agent=record.agent if record is not None else None,
        step=record.step if record is not None else None,
    )


def crash_trace(supervisor: Supervisor, bug: Bug, record: FlightRecord, out: Path) -> Path | None:
    """Write the trace of a crashed execution under ``out``; ``None`` when the child left no template."""
    template = supervisor.template()
    if template is None or not record.complete:
        return None
    template.update(
        bug=bug.to_json(),
        choices=[choice.to_json() for choice in record.choices],
        execution=record.execution,
        steps=record.step,
    )
    draft = supervisor.directory / "crash.json"
    draft.write_text(json.dumps(template), encoding="utf-8")
    trace: Trace = read_trace(draft)
    return write_trace(trace, out)


def mark_ended(status: int) -> None:
    """In a supervised child about to exit with ``status``: say that dnsse, not the program, ends it."""
    directory = supervised_directory()
    if directory is not None:
        with contextlib.suppress(OSError):
            (directory / ENDED_FILE).write_text(str(status), encoding="utf-8")


def _ended_with(directory: Path, status: int) -> bool:
    try:
        return int((directory / ENDED_FILE).read_text(encoding="utf-8")) == status
    except (OSError, ValueError):
        return False


def _die_with_parent() -> None:
    """In the child, before it runs: if this process is killed (SIGKILL), the child is killed too."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


PR_SET_PDEATHSIG = 1


def _needs_relay() -> bool:
    """Whether our output is not a real file (pytest's capture): then the child's is copied into it."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.fileno()
        except (AttributeError, OSError, ValueError):
            return True
    return False


def _relay(source: IO[bytes] | None, destination: IO[str]) -> threading.Thread:
    def copy() -> None:
        assert source is not None
        for line in iter(source.readline, b""):
            destination.write(line.decode("utf-8", "replace"))
            destination.flush()
        source.close()

    thread = threading.Thread(target=copy, daemon=True)
    thread.start()
    return thread
