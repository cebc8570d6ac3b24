"""SCTBench's CS programs under every strategy: executions to the first bug, over several seeds.

The programs are Python ports of SCTBench's "CS" group
(``benchmarks/sctbench_programs/``, one bug each, and the fixed versions
where SCTBench has them). Each (program, strategy, seed) is one campaign that
stops at the first bug; a cell of the table is the median of the executions
it took over the seeds that found it, and how many seeds did (``12 (5/5)``);
``miss`` when no seed found it within the budget. A correct version's cell
is ``pass`` when no seed reported anything, else the number of seeds that
reported a bug (a false report). ``dfs`` cells add ``verified`` where it
exhausted the program without finding the bug.

Run:   .venv/bin/python benchmarks/sctbench.py [--quick] [--out benchmarks/results/sctbench.md]
Full:  5 seeds, 1,000 executions per campaign (dfs, ipb, idb: 5,000); --quick: 2 seeds, 100 (dfs 200)
       on every program but twostage_100.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from dnsse.engine.execution import Limits
from dnsse.errors import BadInput
from dnsse.campaign.config import CampaignConfig
from dnsse.campaign.run import run_campaign
from dnsse.search.registry import BUILT, DEFAULT

HERE = Path(__file__).resolve().parent / "sctbench_programs"
# Strategies that explore systematically: their budget is the larger one.
SYSTEMATIC = {"dfs", "ipb", "idb"}


@dataclass(frozen=True)
class Port:
    """One SCTBench program: its name there, the file and entry function here, and whether it is a fixed version."""

    name: str
    file: str
    entry: str
    threads: int
    correct: bool = False

    @property
    def target(self) -> str:
        return f"{HERE / self.file}:{self.entry}"


PORTS = [
    Port("account_bad", "account.py", "bad", 4),
    Port("arithmetic_prog_bad", "arithmetic_prog.py", "bad", 3),
    Port("bluetooth_driver_bad", "bluetooth_driver.py", "bad", 2),
    Port("carter01_bad", "carter01.py", "bad", 5),
    Port("circular_buffer_bad", "circular_buffer.py", "bad", 3),
    Port("deadlock01_bad", "deadlock01.py", "bad", 3),
    *[Port(f"din_phil{n}_sat", "din_phil.py", f"bad{n}", n + 1) for n in range(2, 8)],
    Port("fsbench_bad", "fsbench.py", "bad", 28),
    Port("lazy01_bad", "lazy01.py", "bad", 4),
    Port("phase01_bad", "phase01.py", "bad", 3),
    Port("queue_bad", "queue.py", "bad", 3),
    *[Port(f"reorder_{n}_bad", "reorder.py", f"bad{n}", n + 1) for n in (3, 4, 5, 10, 20)],
    Port("stack_bad", "stack.py", "bad", 3),
    Port("stringbuffer_jdk1.4", "stringbuffer_jdk.py", "bad", 2),
    Port("sync01_bad", "sync01.py", "bad", 3),
    Port("sync02_bad", "sync02.py", "bad", 3),
    Port("token_ring_bad", "token_ring.py", "bad", 5),
    Port("twostage_bad", "twostage.py", "bad", 4),
    Port("twostage_100_bad", "twostage.py", "bad100", 101),
    Port("wronglock_bad", "wronglock.py", "bad", 9),
    Port("wronglock_3_bad", "wronglock.py", "bad3", 5),
    Port("arithmetic_prog_ok", "arithmetic_prog.py", "ok", 3, correct=True),
    *[Port(f"din_phil{n}_unsat", "din_phil.py", f"ok{n}", n + 1, correct=True) for n in range(2, 8)],
    Port("fsbench_ok", "fsbench.py", "ok", 27, correct=True),
    Port("queue_ok", "queue.py", "ok", 3, correct=True),
    Port("stack_ok", "stack.py", "ok", 3, correct=True),
    Port("sync01_ok", "sync01.py", "ok", 3, correct=True),
]


@dataclass
class Campaign:
    program: str
    strategy: str
    seed: int
    executions: int
    elapsed_s: float
    executions_to_bug: int | None
    bug_kind: str | None
    verified: bool


def run_one(port: Port, strategy: str, seed: int, budget: int, time_budget: float | None) -> Campaign:
    """One campaign, stopping at the first bug."""
    with tempfile.TemporaryDirectory(prefix="dnsse-sctbench-") as out:
        config = CampaignConfig(
            target=port.target, framework="threads", strategy=strategy, budget=budget, time_budget=time_budget,
            seed=seed, out=Path(out), limits=Limits(max_seconds=30.0), minimize=False,
        )
        result = run_campaign(config)
    first = result.bugs[0] if result.bugs else None
    return Campaign(
        port.name, strategy, seed, result.executions, result.elapsed_s,
        first.execution if first is not None else None, first.bug.kind if first is not None else None,
        result.verified is not None,
    )


def cell(port: Port, campaigns: list[Campaign]) -> str:
    found = [c.executions_to_bug for c in campaigns if c.executions_to_bug is not None]
    if port.correct:
        return "pass" if not found else f"FALSE REPORT ({len(found)}/{len(campaigns)})"
    if not found:
        verified = " verified" if any(c.verified for c in campaigns) else ""
        return f"miss{verified}"
    return f"{statistics.median(found):g} ({len(found)}/{len(campaigns)})"


def always_found(campaigns: list[Campaign]) -> float | None:
    """The median executions to the bug, when every campaign found it."""
    found = [c.executions_to_bug for c in campaigns if c.executions_to_bug is not None]
    return statistics.median(found) if campaigns and len(found) == len(campaigns) else None


def default_verdict(port: Port, strategies: list[str], table: dict[tuple[str, str], list[Campaign]]) -> str:
    """Whether the default strategy found the bug in every seed, within 2x + 2 of the best strategy's median."""
    if port.correct or DEFAULT not in strategies:
        return ""
    medians = {s: always_found(table.get((port.name, s), [])) for s in strategies}
    best = min((m for m in medians.values() if m is not None), default=None)
    ours = medians[DEFAULT]
    if ours is None:
        return "no: not in every seed"
    return "yes" if best is not None and ours <= 2 * best + 2 else f"no: best {best:g}"


def render(ports: list[Port], strategies: list[str], table: dict[tuple[str, str], list[Campaign]], header: str) -> str:
    lines = [
        header, "",
        "| program | threads | " + " | ".join(strategies) + f" | {DEFAULT} within 2x+2 of the best |",
        "|---|---:|" + "---:|" * len(strategies) + "---|",
    ]
    for port in ports:
        cells = [cell(port, table.get((port.name, s), [])) for s in strategies]
        verdict = default_verdict(port, strategies, table)
        lines.append(f"| {port.name} | {port.threads} | " + " | ".join(cells) + f" | {verdict} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 seeds, 100 executions (systematic: 200), no twostage_100")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--systematic-budget", type=int, default=5000, help="budget of dfs, ipb and idb")
    parser.add_argument("--time-budget", type=float, default=None, help="seconds per campaign (default: none)")
    parser.add_argument("--strategies", nargs="+", default=[s for s in BUILT if s not in ("llm", "symbolic")])
    parser.add_argument("--programs", nargs="+", default=None, help="only these programs (names as in SCTBench)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/sctbench.md"))
    parser.add_argument("--render", type=Path, nargs="+", default=None, help="only render the table of saved runs' JSON files, merged")
    arguments = parser.parse_args(argv)
    if arguments.render is not None:
        return render_saved(arguments.render, arguments.out)
    if arguments.quick:
        arguments.seeds, arguments.budget, arguments.systematic_budget = 2, 100, 200
    ports = [p for p in PORTS if arguments.programs is None or p.name in arguments.programs]
    if arguments.quick and arguments.programs is None:
        ports = [p for p in ports if p.name != "twostage_100_bad"]
    unknown = sorted(set(arguments.strategies) - set(BUILT))
    if unknown:
        parser.error(f"unknown strategies {unknown}; built: {', '.join(BUILT)}")
    table: dict[tuple[str, str], list[Campaign]] = {}
    started = time.perf_counter()
    for port in ports:
        for strategy in arguments.strategies:
            budget = arguments.systematic_budget if strategy in SYSTEMATIC else arguments.budget
            # A systematic search does not depend on the seed: one campaign stands for all.
            seeds = [1] if strategy in SYSTEMATIC else list(range(1, arguments.seeds + 1))
            for seed in seeds:
                try:
                    campaign = run_one(port, strategy, seed, budget, arguments.time_budget)
                except BadInput as refusal:
                    print(f"{port.name} {strategy}: refused: {refusal}", file=sys.stderr)
                    continue
                table.setdefault((port.name, strategy), []).append(campaign)
                print(f"{port.name:22} {strategy:7} seed {seed}: {campaign.executions_to_bug or '-':>5} "
                      f"({campaign.executions} executions, {campaign.elapsed_s:.1f}s)", file=sys.stderr, flush=True)
    header = (
        f"Executions to the first bug: median over {arguments.seeds} seeds (seeds that found it / seeds); "
        f"budget {arguments.budget:,} executions, dfs/ipb/idb {arguments.systematic_budget:,} (one run: they do not "
        f"depend on the seed); {time.perf_counter() - started:.0f} s in all."
    )
    text = render(ports, arguments.strategies, table, header)
    arguments.out.parent.mkdir(parents=True, exist_ok=True)
    arguments.out.write_text(text)
    arguments.out.with_suffix(".json").write_text(
        json.dumps([asdict(c) for campaigns in table.values() for c in campaigns], indent=1)
    )
    print(text)
    return 0


def render_saved(saved: list[Path], out: Path) -> int:
    """The table of the campaigns that earlier runs saved (their JSON files), merged into one."""
    table: dict[tuple[str, str], list[Campaign]] = {}
    for path in saved:
        for raw in json.loads(path.read_text()):
            campaign = Campaign(**raw)
            table.setdefault((campaign.program, campaign.strategy), []).append(campaign)
    names = {program for program, _ in table}
    ports = [p for p in PORTS if p.name in names]
    strategies = [s for s in BUILT if any(strategy == s for _, strategy in table)]
    seeds = max((len(c) for (_, s), c in table.items() if s not in SYSTEMATIC), default=0)
    text = render(ports, strategies, table, f"Executions to the first bug: median over {seeds} seeds (from {', '.join(map(str, saved))}).")
    out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
