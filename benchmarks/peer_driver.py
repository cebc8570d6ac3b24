"""Run one peer tool on one classic bug and print one JSON line; runs under the peer's own Python.

    python peer_driver.py TOOL STRATEGY PROGRAM.py BUDGET SECONDS

TOOL is ``frontrun`` (Python 3.10+), ``interleave-test`` (3.12+) or ``ploom``
(3.13+). The program file defines ``setup``, ``WORKERS``, ``invariant`` and
``main`` (see ``peer_programs/``). ploom schedules only its own primitives
(``ploom.Lock``, ``ploom.SharedCell``, ``ploom.Thread``), so its models are
written here with them, one per program; it has no condition variable, so the
lost wake-up cannot be written for it.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path


def _load(path: str) -> object:
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def run_frontrun(strategy: str, program: object, budget: int, seconds: float) -> dict:
    import frontrun

    started = time.perf_counter()
    options = {"max_executions": budget, "total_timeout": seconds, "deadlock_timeout": 2.0}
    if strategy == "random":
        options = {"max_attempts": budget, "seed": 0}
    result = frontrun.explore(
        setup=program.setup,
        workers=list(program.WORKERS),
        invariant=program.invariant,
        strategy=strategy,
        reproduce_on_failure=0,
        **options,
    )
    elapsed = time.perf_counter() - started
    found = result.property_holds is False
    failures = getattr(result, "failures", None) or []
    to_bug = failures[0][0] if found and failures else (result.num_explored if found else None)
    return {"found": found, "executions": result.num_explored, "executions_to_bug": to_bug, "elapsed_s": elapsed}


def run_interleave(strategy: str, program: object, budget: int, seconds: float) -> dict:
    import interleave_test

    started = time.perf_counter()
    result = interleave_test.explore(
        program.main, iterations=budget, seed=0, strategy=strategy, timeout=seconds, raise_on_failure=False
    )
    elapsed = time.perf_counter() - started
    failure = result.failure
    return {
        "found": failure is not None,
        "executions": result.schedules_run,
        "executions_to_bug": failure.iteration + 1 if failure is not None else None,
        "kind": failure.kind if failure is not None else None,
        "elapsed_s": elapsed,
    }


def _ploom_lock_order() -> None:
    import ploom

    checking_lock, savings_lock = ploom.Lock(), ploom.Lock()
    checking, savings = ploom.SharedCell(100), ploom.SharedCell(100)

    def move(first: object, second: object, source: object, target: object) -> None:
        with first:
            with second:
                source.write(source.read() - 10)
                target.write(target.read() + 10)

    threads = [
        ploom.Thread(target=move, args=(checking_lock, savings_lock, checking, savings)),
        ploom.Thread(target=move, args=(savings_lock, checking_lock, savings, checking)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert checking.read() + savings.read() == 200


def _ploom_check_then_act() -> None:
    import ploom

    free, handed_out = ploom.SharedCell(1), ploom.SharedCell(0)

    def borrow() -> None:
        if free.read() > 0:
            free.write(free.read() - 1)
            handed_out.write(handed_out.read() + 1)

    threads = [ploom.Thread(target=borrow), ploom.Thread(target=borrow)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert free.read() >= 0 and handed_out.read() <= 1


PLOOM_MODELS = {"lock_order": _ploom_lock_order, "check_then_act": _ploom_check_then_act}


def run_ploom(strategy: str, name: str, budget: int, seconds: float) -> dict:
    import ploom

    model = PLOOM_MODELS.get(name)
    if model is None:
        return {"unsupported": "ploom has no condition variable: the lost wake-up cannot be written with its primitives"}
    config = ploom.Config(max_executions=budget, timeout=seconds, minimize_executions=1, minimize_timeout=0.1)
    started = time.perf_counter()
    try:
        statistics = ploom.check(model, config=config, trace_dir=Path("/tmp/dnsse-ploom-traces"), on_failure=lambda *a: None)
    except ploom.ModelCheckError as error:
        executions = error.statistics.executions
        return {"found": True, "executions": executions, "executions_to_bug": executions,
                "elapsed_s": error.statistics.elapsed or time.perf_counter() - started}
    except ploom.IncompleteExplorationError as error:
        return {"found": False, "executions": budget, "executions_to_bug": None,
                "elapsed_s": time.perf_counter() - started, "note": str(error).splitlines()[0]}
    return {"found": False, "executions": statistics.executions, "executions_to_bug": None,
            "elapsed_s": statistics.elapsed}


def main() -> None:
    tool, strategy, path, budget, seconds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
    if tool == "ploom":
        outcome = run_ploom(strategy, Path(path).stem, budget, seconds)
    elif tool == "frontrun":
        outcome = run_frontrun(strategy, _load(path), budget, seconds)
    else:
        outcome = run_interleave(strategy, _load(path), budget, seconds)
    print(json.dumps(outcome))


if __name__ == "__main__":
    main()
