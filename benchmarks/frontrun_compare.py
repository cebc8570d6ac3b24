"""dnsse against frontrun on the same plain-threads programs, run alternately, as ratios.

Both tools search random schedules of two correct programs (nothing to find,
so both run their whole budget): a lazy initialisation under a lock, and a
transfer between two accounts that takes both locks in one order. Each run
is a child process of its own, dnsse and frontrun taking turns, seed after
seed, so that the load of this shared machine falls on both alike. The
figure of a run is its executions divided by the tool's own search time
(``elapsed_s`` of dnsse's JSON report, the time of ``frontrun.explore``),
and the command's whole wall time, start-up included, is shown beside it.
dnsse also runs a third time with ``DNSSE_AGENT_THREADS=os`` (each agent on
an OS thread of its own instead of a greenlet), for the ratio between them.
On a loaded machine wall time measures the load as much as the tools, so a
fourth run times dnsse's search in CPU seconds (the campaign ``check`` runs,
without its supervising process and reports), against frontrun's search in
CPU seconds (``time.process_time`` around ``frontrun.explore``, all its
threads).

Before the runs, dnsse's modules are compiled to bytecode (``compileall``),
as an installed package's are, as frontrun's are in its virtualenv: run from
a source tree with ``PYTHONDONTWRITEBYTECODE=1``, every ``dnsse check``
would otherwise compile them again and its start-up would measure that.

frontrun is not a dependency of dnsse: ``--install`` puts it (0.7.0 unless
``--frontrun-version`` says otherwise) into a virtualenv of its own under
``DNSSE_BENCH_CACHE`` (default ``~/.cache/dnsse-bench``). Without it, or when
it cannot be installed, the script says so and exits 0.

Run: .venv/bin/python benchmarks/frontrun_compare.py --install [--executions 1000] [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAMS = {"locked lazy init": HERE / "speed" / "locked_lazy_init.py", "two-lock transfer": HERE / "speed" / "two_lock_transfer.py"}
CACHE = Path(os.environ.get("DNSSE_BENCH_CACHE", Path.home() / ".cache" / "dnsse-bench"))
VENV = CACHE / "frontrun-venv"


def frontrun_python() -> Path:
    return VENV / "bin" / "python"


def install(version: str) -> str | None:
    """Make the frontrun venv if it is missing; the reason it cannot be had, or None."""
    wanted = "frontrun" if version == "latest" else f"frontrun=={version}"
    if frontrun_python().exists() and _installed_version() is not None:
        return None
    try:
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, capture_output=True, timeout=300)
        pip = subprocess.run(
            [str(VENV / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", wanted],
            capture_output=True, text=True, timeout=600,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return f"could not make a virtualenv under {VENV}: {error}"
    if pip.returncode != 0:
        tail = " / ".join((pip.stderr or pip.stdout).strip().splitlines()[-2:])
        return f"pip could not install {wanted}: {tail or f'exit {pip.returncode}'}"
    return None


def _installed_version() -> str | None:
    try:
        shown = subprocess.run(
            [str(frontrun_python()), "-c", "import importlib.metadata as m; print(m.version('frontrun'))"],
            capture_output=True, text=True, timeout=120,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return shown.stdout.strip() if shown.returncode == 0 else None


def run_dnsse(program: Path, executions: int, seed: int, agent_threads: str = "") -> dict:
    """One ``dnsse check`` campaign, as a user runs it (supervised child, fixed hash seed).

    ``agent_threads="os"`` gives each agent an OS thread of its own instead of a greenlet.
    """
    with tempfile.TemporaryDirectory(prefix="dnsse-vs-frontrun-") as out:
        report = Path(out) / "report.json"
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "dnsse.cli", "check", f"{program}:main", "--strategy", "random",
             "--budget", str(executions), "--seed", str(seed), "--out", out, "--json", str(report)],
            capture_output=True, text=True, timeout=1200, env={**os.environ, "DNSSE_AGENT_THREADS": agent_threads},
        )
        wall = time.perf_counter() - started
        if done.returncode != 0 or not report.exists():
            raise SystemExit(f"dnsse failed on {program.name} (exit {done.returncode}):\n{done.stdout}{done.stderr}")
        data = json.loads(report.read_text())
    return {"executions": data["executions"], "search_s": data["elapsed_s"], "wall_s": wall}


def with_os_threads(program: Path, executions: int, seed: int) -> dict:
    return run_dnsse(program, executions, seed, "os")


def run_frontrun(program: Path, executions: int, seed: int) -> dict:
    """One ``frontrun.explore`` search, under frontrun's own CLI (it preloads its I/O library)."""
    started = time.perf_counter()
    done = subprocess.run(
        [str(VENV / "bin" / "frontrun"), str(frontrun_python()), str(Path(__file__).resolve()),
         "--frontrun-child", str(program), str(executions), str(seed)],
        capture_output=True, text=True, timeout=1200,
    )
    wall = time.perf_counter() - started
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"frontrun failed on {program.name} (exit {done.returncode}):\n{done.stdout}{done.stderr}")
    return {**json.loads(lines[-1]), "wall_s": wall}


def _frontrun_child(program: str, executions: int, seed: int) -> None:
    """Runs under frontrun's Python, without dnsse."""
    import importlib.util

    import frontrun

    spec = importlib.util.spec_from_file_location(Path(program).stem, program)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    started, cpu = time.perf_counter(), time.process_time()
    result = frontrun.explore(
        setup=module.setup, workers=list(module.WORKERS), invariant=module.invariant,
        strategy="random", max_attempts=executions, seed=seed, reproduce_on_failure=0,
    )
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    if result.property_holds is False:
        raise SystemExit(f"frontrun reports a failure of a correct program: {result}")
    print(json.dumps({"executions": result.num_explored, "search_s": elapsed, "cpu_s": cpu}))


def search_cpu(program: Path, executions: int, seed: int) -> dict:
    """dnsse's search alone, in a child process: the campaign ``check`` runs, timed in CPU seconds."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--dnsse-cpu-child", str(program), str(executions), str(seed)],
        capture_output=True, text=True, timeout=1200,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"dnsse failed on {program.name} (exit {done.returncode}):\n{done.stdout}{done.stderr}")
    return json.loads(lines[-1])


def _dnsse_cpu_child(program: str, executions: int, seed: int) -> None:
    from dnsse.campaign.config import CampaignConfig
    from dnsse.campaign.run import run_campaign

    with tempfile.TemporaryDirectory(prefix="dnsse-vs-frontrun-") as out:
        config = CampaignConfig(
            target=f"{program}:main", strategy="random", budget=executions, seed=seed, out=Path(out), minimize=False
        )
        cpu = time.process_time()
        result = run_campaign(config)
        cpu = time.process_time() - cpu
    if result.bugs:
        raise SystemExit(f"dnsse reports a bug in a correct program: {result.bugs[0]}")
    print(json.dumps({"executions": result.executions, "cpu_s": cpu}))


def _compile_dnsse() -> None:
    """Write the bytecode caches of dnsse's modules (an installed package has them)."""
    import dnsse

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(dnsse.__file__).parent)], capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--install", action="store_true", help="install frontrun into its own virtualenv if missing")
    parser.add_argument("--frontrun-version", default="0.7.0", help="a version, or 'latest'")
    parser.add_argument("--executions", type=int, default=1000, help="random schedules per run")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--frontrun-child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--dnsse-cpu-child", nargs=3, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.frontrun_child is not None:
        program, executions, seed = arguments.frontrun_child
        _frontrun_child(program, int(executions), int(seed))
        return
    if arguments.dnsse_cpu_child is not None:
        program, executions, seed = arguments.dnsse_cpu_child
        _dnsse_cpu_child(program, int(executions), int(seed))
        return
    if arguments.install:
        reason = install(arguments.frontrun_version)
        if reason is not None:
            print(f"frontrun comparison skipped: {reason}")
            return
    version = _installed_version() if frontrun_python().exists() else None
    if version is None:
        print(f"frontrun comparison skipped: frontrun is not installed under {VENV} (run with --install)")
        return
    _compile_dnsse()
    print(f"dnsse (Python {sys.version.split()[0]}) against frontrun {version}: random strategy, "
          f"{arguments.executions} executions a run, seeds {arguments.seeds}, runs alternating\n")
    print("| program | dnsse ex/s (median) | frontrun ex/s (median) | ratio of medians | median of paired ratios "
          "| with start-up: dnsse / frontrun ex/s | dnsse with OS-thread agents ex/s (median) "
          "| per CPU second: dnsse / frontrun ex (median) | ratio, CPU |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, program in PROGRAMS.items():
        ours, theirs, threads, cpu = [], [], [], []
        for index, seed in enumerate(arguments.seeds):
            # Who goes first alternates too: a slow spell of the machine is shared.
            order = (run_dnsse, run_frontrun, with_os_threads, search_cpu)
            order = order[index % 4:] + order[: index % 4]
            results = {runner: runner(program, arguments.executions, seed) for runner in order}
            ours.append(results[run_dnsse])
            theirs.append(results[run_frontrun])
            threads.append(results[with_os_threads])
            cpu.append(results[search_cpu])
        rate = [r["executions"] / r["search_s"] for r in ours]
        peer = [r["executions"] / r["search_s"] for r in theirs]
        wall = statistics.median(r["executions"] / r["wall_s"] for r in ours)
        peer_wall = statistics.median(r["executions"] / r["wall_s"] for r in theirs)
        paired = statistics.median(a / b for a, b in zip(rate, peer))
        os_rate = statistics.median(r["executions"] / r["search_s"] for r in threads)
        per_cpu = statistics.median(r["executions"] / r["cpu_s"] for r in cpu)
        peer_per_cpu = statistics.median(r["executions"] / r["cpu_s"] for r in theirs)
        print(f"| {name} | {statistics.median(rate):,.0f} | {statistics.median(peer):,.0f} "
              f"| {statistics.median(rate) / statistics.median(peer):.2f}x | {paired:.2f}x | {wall:,.0f} / {peer_wall:,.0f} "
              f"| {os_rate:,.0f} | {per_cpu:,.0f} / {peer_per_cpu:,.0f} | {per_cpu / peer_per_cpu:.2f}x |")


if __name__ == "__main__":
    main()
