"""One dnsse campaign on one benchmark variant, measured: bug, executions and time to it, coverage."""

from __future__ import annotations

import ast
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.catalog import Program, Variant
from dnsse.coverage.arcs import ArcRecorder
from dnsse.engine.execution import Limits
from dnsse.engine.runner import ExecutionResult
from dnsse.errors import BadInput
from dnsse.campaign.config import CampaignConfig
from dnsse.campaign.run import run_campaign


@dataclass
class CampaignRecord:
    """What one campaign (program, variant, strategy, seed) showed."""

    program: str
    variant: str
    strategy: str
    seed: int
    executions: int = 0
    elapsed_s: float = 0.0
    bug_kind: str | None = None
    bug_message: str | None = None
    executions_to_bug: int | None = None
    seconds_to_bug: float | None = None
    branches_total: int | None = None
    branches_covered: int | None = None
    # (execution, branches covered) each time coverage grew.
    coverage_curve: list[tuple[int, int]] = field(default_factory=list)
    # Executions that hit the wall-clock limit (each ends its campaign: see dnsse.engine.inconclusive).
    inconclusive: int = 0
    # Why the campaign could not run (a framework or strategy dnsse refuses).
    skipped: str | None = None

    @property
    def found(self) -> bool:
        return self.bug_kind is not None

    @property
    def executions_per_s(self) -> float:
        return self.executions / self.elapsed_s if self.elapsed_s > 0 else 0.0


def run_dnsse(
    program: Program,
    variant: Variant,
    strategy: str,
    seed: int,
    budget: int,
    time_budget: float,
    execution_timeout: float = 10.0,
    pin_inputs: bool = False,
) -> CampaignRecord:
    """One in-process campaign, stopping at the first bug; a refusal (BadInput) is recorded, not raised.

    ``pin_inputs``: every input keeps its default value, as if the program had
    none (the "without inputs explored" column of the table).
    """
    record = CampaignRecord(program.name, variant.entry, strategy, seed)
    started = time.perf_counter()
    seen_arcs = -1

    def on_execution(number: int, result: ExecutionResult, recorder: ArcRecorder | None) -> None:
        nonlocal seen_arcs
        if result.bug is not None and record.executions_to_bug is None:
            record.executions_to_bug = number
            record.seconds_to_bug = time.perf_counter() - started
        if recorder is None:
            return
        arcs = sum(len(a) for a in recorder.arcs.values())
        if arcs != seen_arcs:
            seen_arcs = arcs
            covered = recorder.coverage().branches_covered
            if not record.coverage_curve or record.coverage_curve[-1][1] != covered:
                record.coverage_curve.append((number, covered))

    with tempfile.TemporaryDirectory(prefix="dnsse-bench-") as out:
        config = CampaignConfig(
            target=program.target(variant),
            framework=program.framework,
            world_size=program.world_size,
            strategy=strategy,
            budget=budget,
            time_budget=time_budget,
            seed=seed,
            out=Path(out),
            limits=Limits(max_seconds=execution_timeout),
            minimize=False,
            coverage=True,
            inputs=default_inputs(program, variant) if pin_inputs else {},
        )
        try:
            result = run_campaign(config, on_execution=on_execution)
        except BadInput as refusal:
            record.skipped = str(refusal)
            return record
    record.executions = result.executions
    record.inconclusive = len(result.inconclusive)
    record.elapsed_s = result.elapsed_s
    if result.bugs:
        record.bug_kind = result.bugs[0].bug.kind
        record.bug_message = result.bugs[0].bug.message
    if result.coverage is not None:
        record.branches_total = result.coverage.branches_total
        record.branches_covered = result.coverage.branches_covered
    return record


def default_inputs(program: Program, variant: Variant) -> dict[str, str]:
    """NAME -> default text of each keyword parameter of the variant's entry point that has a literal default.

    Read from the source, so nothing of the program runs outside control.
    """
    tree = ast.parse(program.path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == variant.entry:
            arguments = node.args.posonlyargs + node.args.args
            pairs = list(zip(arguments[len(arguments) - len(node.args.defaults):], node.args.defaults))
            pairs += [(a, d) for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults) if d is not None]
            return {argument.arg: str(ast.literal_eval(default)) for argument, default in pairs}
    raise ValueError(f"{program.file} has no entry point {variant.entry}")
