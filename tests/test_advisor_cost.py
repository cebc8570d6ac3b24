"""The advisor cost table: medians of executions to the first bug, censored at the budget, from the runs file."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from benchmarks.advisor_cost import Run, main, median_to_bug


def _run(strategy: str, seed: int, executions: int, found: bool) -> Run:
    return Run("llm_serving", "main_bug_tight_pool", strategy, seed, executions, found, executions // 2, 4, 2)


def test_a_campaign_that_found_nothing_counts_as_more_than_the_budget() -> None:
    assert median_to_bug([_run("random", 0, 7, True), _run("random", 1, 200, False), _run("random", 2, 9, True)], 200) == "9"
    assert median_to_bug([_run("random", 0, 7, True), _run("random", 1, 200, False), _run("random", 2, 200, False)], 200) == ">200"
    assert median_to_bug([], 200) == "—"


def test_the_table_is_rendered_from_the_runs_file(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    runs = tmp_path / "runs.jsonl"
    rows = [_run("random", 0, 200, False), _run("random", 1, 120, True), _run("llm", 0, 30, True), _run("llm", 1, 50, True)]
    runs.write_text("".join(json.dumps(asdict(run)) + "\n" for run in rows))
    assert main(["--table-only", "--seeds", "2", "--budget", "200", "--runs", str(runs)]) == 0
    table = capsys.readouterr().out
    assert "| llm_serving | `main_bug_tight_pool` | 1/2, 120 | 2/2, 30 |" in table
