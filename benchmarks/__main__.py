"""``python -m benchmarks [--quick] [--out DIR]``: regenerate the evaluation table.

Runs every program x variant x strategy (every strategy dnsse has built, from
``dnsse.search.registry.BUILT``) over several seeds under a fixed budget, the
stress baseline (the same programs uncontrolled), and the peer tools on the
classic plain-threads bugs; writes ``latest.json``, ``latest.md`` and
``coverage.png`` under ``--out`` (default ``benchmarks/results``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

from benchmarks.catalog import PROGRAMS
from benchmarks.harness import run_dnsse
from benchmarks.plot import plot_coverage
from benchmarks.stress import run_stress, stop_ray
from benchmarks.table import render
from dnsse.search.registry import BUILT, PLANNED

QUICK = {"seeds": 2, "budget": 30, "time_budget": 5.0, "execution_timeout": 5.0, "stress_time": 8.0, "run_timeout": 4.0}
# Strategies whose search does not depend on the seed (systematic exploration).
SEEDLESS = {"dfs", "ipb", "idb"}
FULL = {"seeds": 5, "budget": 300, "time_budget": 30.0, "execution_timeout": 10.0, "stress_time": 60.0, "run_timeout": 10.0}


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small budget: finishes in a few minutes")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    parser.add_argument("--programs", nargs="*", default=None, help="only these programs (names from catalog.py)")
    parser.add_argument("--strategies", nargs="*", default=None, help=f"only these strategies (built: {', '.join(BUILT)})")
    parser.add_argument("--seeds", type=int, default=None, help="number of seeds (default: 5, --quick 2)")
    parser.add_argument("--budget", type=int, default=None, help="executions per campaign (default: 300, --quick 30)")
    parser.add_argument(
        "--time-budget", type=float, default=None,
        help="seconds per campaign (default: 30, --quick 5); raise it on a loaded machine so budgets count executions",
    )
    parser.add_argument(
        "--execution-timeout", type=float, default=None,
        help="wall-clock seconds one execution may take (default: 10, --quick 5); an execution past it ends its campaign",
    )
    parser.add_argument(
        "--pin-inputs", action="store_true",
        help="every input keeps its default value: the coverage of the programs without inputs explored",
    )
    parser.add_argument(
        "--correct-only", action="store_true", help="only the correct versions (coverage; no seeded bugs)",
    )
    parser.add_argument("--no-stress", action="store_true", help="skip the uncontrolled stress baseline")
    parser.add_argument("--no-peers", action="store_true", help="skip the peer tools")
    parser.add_argument(
        "--from-json", type=Path, default=None, metavar="PATH",
        help="run nothing: render the table, plot (and, for a full run, BENCHMARKS.md) from a results JSON",
    )
    return parser.parse_args(argv)


def machine() -> dict:
    import torch

    memory = subprocess.run(["free", "-h"], capture_output=True, text=True, check=False).stdout.splitlines()
    return {
        "cpus": os.cpu_count(),
        "memory": memory[1].split()[1] if len(memory) > 1 else "?",
        "python": platform.python_version(),
        "torch": torch.__version__,
        "platform": platform.platform(),
    }


def main(argv: list[str] | None = None) -> int:
    arguments = _arguments(argv)
    if arguments.from_json is not None:
        results = json.loads(arguments.from_json.read_text(encoding="utf-8"))
        _write(results, arguments.out, full=results["command"] == "python -m benchmarks")
        return 0
    settings = dict(QUICK if arguments.quick else FULL)
    overrides = {"seeds": arguments.seeds, "budget": arguments.budget, "time_budget": arguments.time_budget,
                 "execution_timeout": arguments.execution_timeout}
    settings.update({key: value for key, value in overrides.items() if value is not None})
    custom = any(value is not None for value in overrides.values()) or arguments.pin_inputs or arguments.correct_only
    programs = [p for p in PROGRAMS if arguments.programs is None or p.name in arguments.programs]
    strategies = [s for s in BUILT if arguments.strategies is None or s in arguments.strategies]
    seeds = list(range(settings["seeds"]))
    started = time.perf_counter()
    results: dict = {
        "command": "python -m benchmarks" + (" " + " ".join(argv if argv is not None else sys.argv[1:]) if argv or sys.argv[1:] else ""),
        "machine": machine(),
        "config": {**settings, "seeds": seeds, "stress_runs": settings["budget"], "pin_inputs": arguments.pin_inputs},
        "strategies": strategies,
        "unsupported_strategies": {name: "not built yet (dnsse refuses it)" for name in PLANNED},
        "campaigns": [],
        "stress": [],
        "peers": [],
    }
    for program in programs:
        for variant in program.variants:
            if arguments.correct_only and variant.bug is not None:
                continue
            for strategy in strategies:
                # A systematic strategy ignores its seed: one run says all the seeds would.
                for seed in seeds[:1] if strategy in SEEDLESS else seeds:
                    record = run_dnsse(
                        program, variant, strategy, seed, settings["budget"], settings["time_budget"],
                        settings["execution_timeout"], arguments.pin_inputs,
                    )
                    results["campaigns"].append(asdict(record))
                    _progress(record.program, record.variant, f"{strategy}/{seed}", record.skipped, record.bug_kind,
                              record.executions_to_bug, record.executions, started)
    if not arguments.no_peers:
        from benchmarks.peers import run_peers

        results["peers"] = run_peers(settings["budget"], settings["time_budget"])
    # Uncontrolled runs come last: a hung real run (a gloo process, a Ray driver
    # thread and its actors) must not share the process with controlled campaigns.
    if not arguments.no_stress:
        for program in programs:
            for variant in program.variants:
                if arguments.correct_only and variant.bug is not None:
                    continue
                stress = run_stress(program, variant, settings["budget"], settings["run_timeout"], settings["stress_time"])
                entry = asdict(stress)
                entry.pop("arcs")
                results["stress"].append(entry)
                _progress(stress.program, stress.variant, "stress", stress.skipped, stress.bug, stress.runs_to_bug,
                          stress.runs, started)
        stop_ray()
    results["elapsed_s"] = round(time.perf_counter() - started, 1)
    arguments.out.mkdir(parents=True, exist_ok=True)
    (arguments.out / "latest.json").write_text(json.dumps(results, indent=1, default=list), encoding="utf-8")
    complete = arguments.programs is None and arguments.strategies is None and not custom
    _write(results, arguments.out, full=not arguments.quick and complete)
    return 0


def _write(results: dict, out: Path, full: bool) -> None:
    """The Markdown table and the plot under ``out``; BENCHMARKS.md too for a complete full run."""
    out.mkdir(parents=True, exist_ok=True)
    table = render(results)
    (out / "latest.md").write_text(_header(results) + table, encoding="utf-8")
    try:
        plot_coverage(results, out / "coverage.png")
        plotted = " and coverage.png"
    except ModuleNotFoundError:  # matplotlib comes with the bench extra: pip install -e '.[bench]'
        plotted = " (no coverage.png: matplotlib is not installed; pip install -e '.[bench]')"
    if full:
        publish(results, table)
    print(table)
    print(f"wrote {out}/latest.md{plotted} ({results['command']}, {results['elapsed_s']}s)")


SPEED_COMMANDS = """## Speed benchmarks

Not part of the table below; each prints its own table (figures in README's Speed and Cost model sections):

| command | measures |
|---|---|
| `.venv/bin/python benchmarks/engine_speed.py` | scheduling points/s and CPU µs per point under each chooser (no switches, random, pct, pos, dfs; `--points-only` for those alone); executions/s of the 2-rank ten-collective program against real gloo |
| `.venv/bin/python benchmarks/cost_model.py` | an execution's fixed cost (threads; torch at 2..64 ranks), a scheduling point, a switch, a coverage event |
| `.venv/bin/python benchmarks/frontrun_compare.py --install` | dnsse against frontrun (installed into its own venv) on a locked lazy init and a two-lock transfer, alternating runs, ratios |
| `.venv/bin/python benchmarks/ray_speed.py` | controlled executions/s of a Ray program, against one real Ray run |
| `.venv/bin/python benchmarks/monitor_speed.py` | LTL monitor events/s, alone and inside a run |
| `.venv/bin/python benchmarks/coverage_overhead.py` | what branch coverage and coverage feedback cost per program |
| `.venv/bin/python benchmarks/parallel_speed.py` | `--workers 2` against 1 |
| `.venv/bin/python benchmarks/containment_cost.py` | what running in a supervised child costs |

"""


def publish(results: dict, table: str) -> None:
    """BENCHMARKS.md at the repository root: the latest full table, its machine and its command."""
    m = results["machine"]
    text = (
        "# Benchmarks\n\n"
        "Five distributed AI programs, each with a correct version and seeded bugs modelled on real bug "
        "reports (`benchmarks/programs/`, listed in `benchmarks/catalog.py`), searched by every dnsse "
        "strategy that exists, against a stress baseline that runs the same programs uncontrolled "
        "(real gloo in processes, real threads, real Ray) and, on three classic plain-threads bugs "
        "(`benchmarks/peer_programs/`), against the Python peers frontrun, interleave-test and ploom.\n\n"
        "Regenerate (`--quick`, a smaller budget, takes about four minutes here):\n\n"
        "```\n.venv/bin/pip install -e '.[bench]'\nbash benchmarks/setup_peers.sh   # the peers, optional\n"
        f"{results['command']}\n```\n\n"
        f"Machine: {m['cpus']} CPUs, {m['memory']} memory, Python {m['python']}, torch {m['torch']}, "
        f"{m['platform']}. The run took {results['elapsed_s']}s.\n\n"
        "Results: `benchmarks/results/latest.json` (every campaign), `latest.md` (this table), "
        "`coverage.png` (coverage against executions per strategy).\n\n"
        "How to read it: every dnsse campaign runs with branch coverage on (a line tracer in every agent, "
        "so executions/s are lower than plain `dnsse check`) and checks the program's own `DNSSE_SPECS` "
        "besides its `assert`s; `dfs`, `ipb` and `idb` ignore seeds and run once per variant. A stress hang is counted "
        "when a run exceeds its timeout, so its seconds to the bug include that timeout; Ray's workers are "
        "separate processes, so Ray programs have no stress coverage. Peers' executions/s include their "
        "own set-up inside the search call.\n\n"
        + SPEED_COMMANDS
        + table
        + _containment_section()
    )
    (Path(__file__).resolve().parent.parent / "BENCHMARKS.md").write_text(text, encoding="utf-8")


def _containment_section() -> str:
    """The last figures of benchmarks/containment_cost.py --write, kept when the table is regenerated."""
    path = Path(__file__).resolve().parent / "results" / "containment.md"
    return "\n" + path.read_text(encoding="utf-8") if path.exists() else ""


def _header(results: dict) -> str:
    m = results["machine"]
    return (
        f"# dnsse benchmark results\n\n`{results['command']}` on {m['cpus']} CPUs, {m['memory']} memory, "
        f"Python {m['python']}, torch {m['torch']} ({m['platform']}); took {results['elapsed_s']}s.\n\n"
    )


def _progress(program: str, variant: str, what: str, skipped: str | None, bug: object, to_bug: object,
              count: int, started: float) -> None:
    outcome = f"skipped: {skipped}" if skipped else (f"{bug} after {to_bug}" if bug else f"nothing in {count}")
    print(f"[{time.perf_counter() - started:6.0f}s] {program}/{variant} {what}: {outcome}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
