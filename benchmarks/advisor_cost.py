"""``python -m benchmarks.advisor_cost``: the advisor's expected cost, predicted and measured.

For every seeded bug of the benchmark programs, over several seeds, it runs
``random`` and ``llm`` (the offline advisor) until the first bug or the
budget, appends one JSON line per campaign to ``--runs`` (so campaigns can run
in several processes, by program or by strategy, and be tabled together with
``--table-only --also``), and reports the median executions to the first bug
of each (executions, not seconds: the machine is shared), and measures:

- ``p``: random's bug rate per execution (bugs found / executions run, a
  campaign that found none counting all its executions);
- ``u``: the fraction of random's executions that showed new behaviour (an
  order of two dependent operations of different agents that no earlier
  execution of the campaign showed), the same yardstick the advisor is judged by;
- ``q``: the advisor's hint precision (hints that led to new behaviour or the
  bug / hints tried).

The model: a hint that does not pay off leaves an execution as good as a
random one (bug rate ``p``); one that pays off yields new behaviour, and the
first appearance of the bug is new behaviour, found by a random execution
with probability ``p`` among the ``u`` that are new, so ``p / u`` per useful
hint. The predicted bug rate of a guided execution is ``(1 - q) p + q min(1, p / u)``
and its expected executions to the first bug the inverse; the table sets it
beside the measured rate of ``llm`` (bugs found / executions run) and ``1 / p``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from benchmarks.catalog import PROGRAMS, Program, Variant
from dnsse.advisor.steps import StepLog
from dnsse.advisor.summary import RunSummary
from dnsse.campaign.campaign import Campaign, advisor_setup, watch_for
from dnsse.campaign.config import CampaignConfig
from dnsse.search.registry import make_strategy


@dataclass
class Run:
    program: str
    variant: str
    strategy: str
    seed: int
    executions: int
    found: bool
    new_behaviour: int  # executions that showed an order of dependent operations never seen before
    tried: int = 0  # llm: hints tried
    useful: int = 0  # llm: hints that led to new behaviour or the bug


def run_one(program: Program, variant: Variant, strategy_name: str, seed: int, budget: int) -> Run:
    with tempfile.TemporaryDirectory(prefix="dnsse-cost-") as out:
        config = CampaignConfig(
            target=program.target(variant), framework=program.framework, world_size=program.world_size,
            strategy=strategy_name, budget=budget, seed=seed, out=Path(out), minimize=False,
        )
        strategy = make_strategy(strategy_name, seed, advisor=advisor_setup(config))
        campaign = Campaign(config)
        watch_for(campaign, strategy)
        log = StepLog()
        campaign.watch(log)
        summary = RunSummary()
        run = Run(program.name, variant.entry, strategy_name, seed, 0, False, 0)
        with campaign.framework.activate():
            campaign.prepare()
            while run.executions < budget:
                result = campaign.execute(strategy.chooser_for(run.executions))
                strategy.observe(result)
                run.executions += 1
                before = len(summary.orders)
                summary.observe(log.steps)
                run.new_behaviour += int(len(summary.orders) > before)
                if result.bug is not None:
                    run.found = True
                    break
        strategy.close()
        report = strategy.advisor_report()
        if report is not None:
            offline = report["offline"]
            run.tried, run.useful = offline["tried"], offline["useful"]
        return run


def rate(runs: list[Run]) -> float:
    """Bugs found per execution (the maximum-likelihood rate of a geometric wait, censored at the budget)."""
    executions = sum(run.executions for run in runs)
    return sum(run.found for run in runs) / executions if executions else 0.0


def row(runs: list[Run], budget: int) -> dict:
    random_runs = [run for run in runs if run.strategy == "random"]
    llm_runs = [run for run in runs if run.strategy == "llm"]
    p = rate(random_runs)
    u = sum(run.new_behaviour for run in random_runs) / max(1, sum(run.executions for run in random_runs))
    tried = sum(run.tried for run in llm_runs)
    q = sum(run.useful for run in llm_runs) / tried if tried else 0.0
    predicted_rate = (1 - q) * p + q * min(1.0, p / u) if u > 0 else p
    measured = rate(llm_runs)
    return {
        "program": runs[0].program,
        "variant": runs[0].variant,
        "p_random": p,
        "u_random": u,
        "hints_tried": tried,
        "precision": q,
        "random_found": f"{sum(r.found for r in random_runs)}/{len(random_runs)}",
        "llm_found": f"{sum(r.found for r in llm_runs)}/{len(llm_runs)}",
        "random_median": median_to_bug(random_runs, budget),
        "llm_median": median_to_bug(llm_runs, budget),
        "random_expected": 1 / p if p else None,
        "llm_predicted": 1 / predicted_rate if predicted_rate else None,
        "llm_measured": 1 / measured if measured else None,
    }


def median_to_bug(runs: list[Run], budget: int) -> str:
    """The median executions to the first bug; a campaign that found none counts as more than ``budget``."""
    if not runs:
        return "—"
    waits = sorted(run.executions if run.found else budget + 1 for run in runs)
    middle = waits[(len(waits) - 1) // 2]
    return f">{budget}" if middle > budget else str(middle)


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def render(rows: list[dict], seeds: int, budget: int) -> str:
    lines = [
        f"Seeds 0–{seeds - 1}, at most {budget} executions per campaign. Medians: executions to the first bug "
        f"over the seeds (a campaign that found none counts as >{budget}); the expected counts are "
        "1 / (bugs found / executions run), `—` where no campaign found it.",
        "",
        "| program | variant | random: found, median | llm: found, median | random 1/p | new behaviour u | "
        "hints tried | precision q | llm predicted | llm measured |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['program']} | `{r['variant']}` | {r['random_found']}, {r['random_median']} | "
            f"{r['llm_found']}, {r['llm_median']} | {_number(r['random_expected'])} | "
            f"{r['u_random']:.2f} | {r['hints_tried']} | {r['precision']:.2f} | {_number(r['llm_predicted'])} | "
            f"{_number(r['llm_measured'])} |"
        )
    return "\n".join(lines)


def _load(paths: list[Path]) -> list[Run]:
    runs = []
    for path in paths:
        for line in path.read_text().splitlines():
            if line.strip():
                runs.append(Run(**json.loads(line)))
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.advisor_cost", description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--programs", nargs="*", default=None, help="only these programs (names from catalog.py)")
    parser.add_argument("--variants", nargs="*", default=None, help="only these variants (entry points)")
    parser.add_argument("--strategies", nargs="*", default=["random", "llm"], choices=["random", "llm"])
    parser.add_argument("--runs", type=Path, default=Path(__file__).parent / "results" / "advisor_cost.jsonl",
                        help="one JSON line per campaign, appended as each ends")
    parser.add_argument("--table-only", action="store_true", help="render the table from --runs (and --also) only")
    parser.add_argument("--also", type=Path, nargs="*", default=[], help="more run files to include in the table")
    arguments = parser.parse_args(argv)
    if not arguments.table_only:
        arguments.runs.parent.mkdir(parents=True, exist_ok=True)
        for program in PROGRAMS:
            if arguments.programs is not None and program.name not in arguments.programs:
                continue
            for variant in program.variants:
                if variant.correct or (arguments.variants is not None and variant.entry not in arguments.variants):
                    continue
                for strategy in arguments.strategies:
                    for seed in range(arguments.seeds):
                        run = run_one(program, variant, strategy, seed, arguments.budget)
                        with arguments.runs.open("a") as out:
                            out.write(json.dumps(asdict(run)) + "\n")
                        print(f"{program.name} {variant.entry} {strategy} seed {seed}: "
                              f"{'bug' if run.found else 'none'} after {run.executions}", flush=True)
    runs = _load([arguments.runs, *arguments.also])
    rows = []
    for program in PROGRAMS:
        for variant in program.variants:
            group = [run for run in runs if run.program == program.name and run.variant == variant.entry
                     and run.seed < arguments.seeds]
            if group:
                rows.append(row(group, arguments.budget))
    print(render(rows, arguments.seeds, arguments.budget))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
