"""How long minimizing each seeded bug of the benchmark programs takes, and how small its trace gets.

For every buggy variant of ``benchmarks/catalog.py`` a campaign without
minimization finds the bug (``--strategy``, ``--seed``, at most
``--budget`` executions); then the found run is minimized as a campaign
minimizes it (``Campaign.minimized``), timed in CPU time (this process's
threads, ``time.process_time``) and wall time, and counted in replays (runs
of the target). The table also gives each trace's length (choices) and
score (answers that differ from the default: what a person reads) before
and after. A bug not found within the budget is listed as such.

Run: .venv/bin/python benchmarks/minimize_speed.py [--json FILE] [--only PROGRAM]
Compare two versions of dnsse by running the script under each, alternately
(``PYTHONPATH=.../src``), and comparing their JSON.
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

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.catalog import PROGRAMS, Program, Variant
from dnsse.engine.execution import Limits
from dnsse.engine.runner import ExecutionResult
from dnsse.campaign.campaign import Campaign
from dnsse.campaign.config import CampaignConfig
from dnsse.search.minimize import ShrinkingChooser
from dnsse.search.registry import make_strategy


@dataclass
class MinimizeRecord:
    program: str
    variant: str
    found_after: int | None = None
    bug_kind: str | None = None
    cpu_s: float = 0.0
    wall_s: float = 0.0
    replays: int = 0
    choices_before: int = 0
    choices_after: int = 0
    score_before: int = 0
    score_after: int = 0
    same_bug: bool = True


def _score(campaign: Campaign, choices: list) -> int:
    """The minimizer's score of ``choices``: the answers that differ from the default, counted by a replay."""
    chooser = ShrinkingChooser(list(choices))
    campaign.rerun(chooser)
    return chooser.deviations


def measure(program: Program, variant: Variant, strategy: str, seed: int, budget: int) -> MinimizeRecord:
    record = MinimizeRecord(program.name, variant.entry)
    with tempfile.TemporaryDirectory(prefix="dnsse-minimize-") as out:
        config = CampaignConfig(
            target=program.target(variant),
            framework=program.framework,
            world_size=program.world_size,
            strategy=strategy,
            seed=seed,
            out=Path(out),
            limits=Limits(max_seconds=10.0),
            minimize=True,
        )
        campaign = Campaign(config)
        chooser_source = make_strategy(strategy, seed)
        with campaign.framework.activate():
            campaign.prepare()
            found: ExecutionResult | None = None
            for execution in range(budget):
                result = campaign.execute(chooser_source.chooser_for(execution))
                chooser_source.observe(result)
                if result.bug is not None:
                    found, record.found_after = result, execution + 1
                    break
            if found is None:
                return record
            record.bug_kind = found.bug.kind  # type: ignore[union-attr]
            record.choices_before, record.score_before = len(found.choices), _score(campaign, found.choices)
            replays = 0
            execute = campaign.framework.start

            def counting(*arguments: object) -> None:
                nonlocal replays
                replays += 1
                execute(*arguments)  # type: ignore[arg-type]

            campaign.framework.start = counting  # type: ignore[method-assign]
            cpu, wall = time.process_time(), time.perf_counter()
            smaller = campaign.minimized(found, record.found_after)  # type: ignore[arg-type]
            record.cpu_s, record.wall_s = time.process_time() - cpu, time.perf_counter() - wall
            campaign.framework.start = execute  # type: ignore[method-assign]
            record.replays = replays
            record.choices_after, record.score_after = len(smaller.choices), _score(campaign, smaller.choices)
            record.same_bug = smaller.bug is not None and smaller.bug.signature() == found.bug.signature()  # type: ignore[union-attr]
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--strategy", default="random")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=300, help="executions to find each bug")
    parser.add_argument("--only", help="one program by name")
    parser.add_argument("--json", type=Path, help="also write the records here")
    arguments = parser.parse_args()
    records = []
    for program in PROGRAMS:
        if arguments.only and program.name != arguments.only:
            continue
        for variant in program.variants:
            if variant.correct:
                continue
            record = measure(program, variant, arguments.strategy, arguments.seed, arguments.budget)
            records.append(record)
            print(json.dumps(asdict(record)), file=sys.stderr, flush=True)
    print("| program | variant | found after | CPU s | wall s | replays | choices before → after | score before → after |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in records:
        if r.found_after is None:
            print(f"| {r.program} | {r.variant} | not in {arguments.budget} | | | | | |")
            continue
        print(
            f"| {r.program} | {r.variant} | {r.found_after} | {r.cpu_s:.2f} | {r.wall_s:.2f} | {r.replays} | "
            f"{r.choices_before} → {r.choices_after} | {r.score_before} → {r.score_after} |"
        )
    minimized = [r for r in records if r.found_after is not None]
    if minimized:
        print(
            f"\nMedian over {len(minimized)} bugs: CPU {statistics.median(r.cpu_s for r in minimized):.2f} s, "
            f"wall {statistics.median(r.wall_s for r in minimized):.2f} s, "
            f"replays {statistics.median(r.replays for r in minimized):.0f}"
        )
    if arguments.json:
        arguments.json.write_text(json.dumps([asdict(r) for r in records], indent=1))


if __name__ == "__main__":
    main()
