"""The stress baseline: the same program run uncontrolled, the same number of times.

- torch: real gloo process groups in real processes (``torch.multiprocessing``
  spawn, a ``FileStore`` in a temporary directory), one group per variant that
  runs the entry point ``runs`` times; the program's own
  ``init_process_group``/``destroy_process_group`` bind to that group. Gloo
  inside threads of one process (a thread-local default group) was tried and
  hangs, hence processes.
- threads: the entry point with real threads, in this process.
- ray: real Ray (one ``ray.init()`` for all runs), where it starts.

A bug is an assertion that fails, an exception that escapes, or a run that
does not finish within ``run_timeout`` seconds (a hang: deadlock or livelock).
Branch coverage is recorded with the same tracer dnsse uses (torch: in every
rank's process; threads: in every thread); Ray's workers are separate
processes that the tracer does not reach, so Ray programs have no stress
coverage.
"""

from __future__ import annotations

import os
import queue
import sys
import tempfile
import threading
import time
import types
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.catalog import Program, Variant
from dnsse.coverage.arcs import ArcRecorder, branch_coverage


@dataclass
class StressRecord:
    program: str
    variant: str
    runs: int = 0
    elapsed_s: float = 0.0
    bug: str | None = None
    runs_to_bug: int | None = None
    seconds_to_bug: float | None = None
    branches_total: int | None = None
    branches_covered: int | None = None
    skipped: str | None = None
    arcs: set = field(default_factory=set, repr=False)

    @property
    def found(self) -> bool:
        return self.bug is not None

    @property
    def runs_per_s(self) -> float:
        return self.runs / self.elapsed_s if self.elapsed_s > 0 else 0.0


def run_stress(
    program: Program, variant: Variant, runs: int, run_timeout: float, time_cap: float | None = None
) -> StressRecord:
    """Up to ``runs`` uncontrolled runs, stopping at the first bug or after ``time_cap`` seconds of runs."""
    record = StressRecord(program.name, variant.entry)
    cap = time_cap if time_cap is not None else float("inf")
    runner = {"torch": _torch_runs, "threads": _thread_runs, "ray": _ray_runs}[program.framework]
    try:
        runner(program, variant, runs, run_timeout, cap, record)
    except _CannotStart as reason:
        record.skipped = str(reason)
        return record
    if program.framework != "ray":
        coverage = branch_coverage(program.path, record.arcs)
        record.branches_total, record.branches_covered = coverage.branches_total, coverage.branches_covered
    return record


class _CannotStart(Exception):
    """The uncontrolled runtime is not available here (why is the message)."""


def _fresh_module(path: Path) -> types.ModuleType:
    """A new copy of the program's module, as dnsse gives each execution."""
    module = types.ModuleType("__dnsse_stress__")
    module.__file__ = str(path)
    code = compile(path.read_text(encoding="utf-8"), str(path), "exec")
    exec(code, module.__dict__)
    return module


def _found(record: StressRecord, run: int, what: str, started: float) -> None:
    record.bug = what
    record.runs_to_bug = run
    record.seconds_to_bug = time.perf_counter() - started
    record.elapsed_s = record.seconds_to_bug


# ------------------------------------------------------------------- threads
def _thread_runs(program: Program, variant: Variant, runs: int, run_timeout: float, cap: float, record: StressRecord) -> None:
    started = time.perf_counter()
    recorder = ArcRecorder([str(program.path)])
    tracer = recorder.compose(None)
    for run in range(1, runs + 1):
        if time.perf_counter() - started > cap:
            break
        outcome: list[BaseException | None] = []

        def body() -> None:
            sys.settrace(tracer)
            try:
                getattr(_fresh_module(program.path), variant.entry)()
                outcome.append(None)
            except BaseException as error:  # noqa: BLE001 - any escape is the finding
                outcome.append(error)
            finally:
                sys.settrace(None)

        threading.settrace(tracer)
        try:
            # A daemon: a hung run must not keep the harness from exiting.
            thread = threading.Thread(target=body, daemon=True)
            thread.start()
            thread.join(run_timeout)
        finally:
            threading.settrace(None)  # type: ignore[arg-type]
        record.runs = run
        record.arcs |= recorder.arcs[str(program.path)]
        if not outcome:
            _found(record, run, f"hang: run {run} did not finish within {run_timeout:g}s", started)
            return
        if outcome[0] is not None:
            _found(record, run, f"{type(outcome[0]).__name__}: {outcome[0]}", started)
            return
        record.elapsed_s = time.perf_counter() - started


# --------------------------------------------------------------------- torch
def _torch_runs(program: Program, variant: Variant, runs: int, run_timeout: float, cap: float, record: StressRecord) -> None:
    import torch.multiprocessing as mp

    context = mp.get_context("spawn")
    results = context.Queue()
    with tempfile.TemporaryDirectory(prefix="dnsse-stress-") as directory:
        store = os.path.join(directory, "store")
        processes = [
            context.Process(
                target=_torch_rank,
                args=(rank, program.world_size, str(program.path), variant.entry, runs, store, results),
                daemon=True,
            )
            for rank in range(program.world_size)
        ]
        for process in processes:
            process.start()
        try:
            _collect_torch(program, runs, run_timeout, cap, results, record)
        finally:
            for process in processes:
                if process.is_alive():
                    process.kill()
                process.join(5)


def _collect_torch(
    program: Program, runs: int, run_timeout: float, cap: float, results: object, record: StressRecord
) -> None:
    """Times count from the moment every rank joined the group: process start-up is not a run."""
    started = time.perf_counter()
    # Process start-up (importing torch, joining the group) gets its own allowance:
    # each rank reports run 0 once it joined the group.
    deadline = time.perf_counter() + 120.0
    reported: dict[int, int] = {}
    for run in range(0, runs + 1):
        if run > 0 and time.perf_counter() - started > cap:
            break
        while sum(1 for r in reported.values() if r >= run) < program.world_size:
            try:
                rank, done_run, error, arcs = results.get(timeout=max(0.01, deadline - time.perf_counter()))  # type: ignore[attr-defined]
            except queue.Empty:
                if run == 0:
                    raise _CannotStart("the gloo process group did not form within 120s")
                _found(record, run, f"hang: run {run} did not finish within {run_timeout:g}s", started)
                return
            record.arcs |= set(map(tuple, arcs))
            reported[rank] = done_run
            if error is not None:
                record.runs = done_run
                _found(record, done_run, f"rank {rank}: {error}", started)
                return
        record.runs = run
        deadline = time.perf_counter() + run_timeout
        if run == 0:
            started = time.perf_counter()
        record.elapsed_s = time.perf_counter() - started


def _torch_rank(
    rank: int, world_size: int, path: str, entry: str, runs: int, store: str, results: object
) -> None:
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world_size)
    # The program's own init/destroy bind to the group this process already joined.
    dist.init_process_group = lambda *args, **kwargs: None
    dist.destroy_process_group = lambda *args, **kwargs: None
    results.put((rank, 0, None, []))  # type: ignore[attr-defined]
    recorder = ArcRecorder([path])
    for run in range(1, runs + 1):
        error = None
        sys.settrace(recorder.compose(None))
        try:
            getattr(_fresh_module(Path(path)), entry)(rank, world_size)
        except BaseException as failure:  # noqa: BLE001 - any escape is the finding
            error = f"{type(failure).__name__}: {failure}"
        finally:
            sys.settrace(None)
        results.put((rank, run, error, sorted(recorder.arcs[path])))  # type: ignore[attr-defined]
        if error is not None:
            return


# ----------------------------------------------------------------------- ray
_ray_started: str | None = None


def _start_ray() -> None:
    global _ray_started
    if _ray_started == "ok":
        return
    if _ray_started is not None:
        raise _CannotStart(_ray_started)
    try:
        import ray

        ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        _ray_started = "ok"
    except Exception as error:  # noqa: BLE001 - whatever stops Ray from starting is the reason
        _ray_started = f"real Ray could not start here: {type(error).__name__}: {error}"
        raise _CannotStart(_ray_started) from None


def _ray_runs(program: Program, variant: Variant, runs: int, run_timeout: float, cap: float, record: StressRecord) -> None:
    _start_ray()
    started = time.perf_counter()
    for run in range(1, runs + 1):
        if time.perf_counter() - started > cap:
            break
        outcome: list[BaseException | None] = []

        def body() -> None:
            try:
                getattr(_fresh_module(program.path), variant.entry)()
                outcome.append(None)
            except BaseException as error:  # noqa: BLE001 - any escape is the finding
                outcome.append(error)

        thread = threading.Thread(target=body, daemon=True)
        thread.start()
        thread.join(run_timeout)
        record.runs = run
        if not outcome:
            _found(record, run, f"hang: run {run} did not finish within {run_timeout:g}s", started)
            return
        if outcome[0] is not None:
            message = str(outcome[0]).strip().splitlines()
            _found(record, run, f"{type(outcome[0]).__name__}: {message[-1] if message else ''}", started)
            return
        record.elapsed_s = time.perf_counter() - started


def stop_ray() -> None:
    """Shut real Ray down if this module started it."""
    global _ray_started
    if _ray_started == "ok":
        import ray

        ray.shutdown()
    _ray_started = None
