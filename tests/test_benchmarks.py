"""The benchmark programs: correct versions pass, every seeded bug is found, the table renders."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

from helpers import torch_marks

from benchmarks.catalog import PEER_PROGRAMS, PROGRAMS, Program, Variant
from benchmarks.harness import run_dnsse
from benchmarks.table import render

CORRECT = [
    pytest.param(p, v, id=f"{p.name}-{v.entry}", marks=torch_marks(p.path)) for p in PROGRAMS for v in p.variants if v.correct
]
# Bugs that need hundreds of executions run only with DNSSE_SLOW=1, with the strategy that finds them.
SLOW_BUGS = {("llm_serving", "main_bug_refcount"): "pct", ("llm_serving", "main_bug_tight_pool"): "fuzz"}
# Wall-clock limits far above what a campaign or an execution takes, however loaded the machine:
# safety nets, so what a test asserts depends on executions, never on speed.
NO_TIME_LIMIT = dict(time_budget=600.0, execution_timeout=120.0)
BUGGY = [
    pytest.param(
        p, v, id=f"{p.name}-{v.entry}", marks=torch_marks(p.path) + ([pytest.mark.slow] if (p.name, v.entry) in SLOW_BUGS else [])
    )
    for p in PROGRAMS
    for v in p.variants
    if not v.correct
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_program_is_realistic_size_with_entry_points_specs_and_reports(program: Program) -> None:
    source = program.path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert 100 <= len(source.splitlines()) <= 300
    assert {v.entry for v in program.variants} <= functions
    assert "DNSSE_SPECS" in source
    docstring = ast.get_docstring(tree) or ""
    # Each bug variant's docstring entry names the report it is modelled on (owner/repo#number).
    assert len(re.findall(r"[\w.-]+/[\w.-]+#\d+", docstring)) >= len(program.variants) - 1


@pytest.mark.parametrize("program,variant", CORRECT)
def test_correct_version_passes_under_pct(program: Program, variant: Variant) -> None:
    record = run_dnsse(program, variant, "pct", seed=0, budget=8, **NO_TIME_LIMIT)
    assert record.skipped is None
    assert not record.found, record.bug_message
    assert record.executions == 8


def _found_by_some_strategy(program: Program, variant: Variant, budget: int) -> list[str]:
    finds = []
    # hybrid first: the variants whose bug needs an input value are found by direction.
    for strategy in ("hybrid", "pos", "random", "pct", "dfs"):
        record = run_dnsse(program, variant, strategy, seed=0, budget=budget, **NO_TIME_LIMIT)
        if record.found:
            finds.append(f"{strategy}: {record.bug_kind} after {record.executions_to_bug}")
            break
    return finds


@pytest.mark.parametrize("program,variant", BUGGY)
def test_seeded_bug_is_found(program: Program, variant: Variant) -> None:
    if (program.name, variant.entry) in SLOW_BUGS:
        if not os.environ.get("DNSSE_SLOW"):
            pytest.skip("slow: set DNSSE_SLOW=1")
        record = run_dnsse(program, variant, SLOW_BUGS[program.name, variant.entry], seed=0, budget=600, **NO_TIME_LIMIT)
        assert record.found
        return
    assert _found_by_some_strategy(program, variant, budget=25)


def test_peer_programs_have_the_peer_interface() -> None:
    for peer in PEER_PROGRAMS:
        tree = ast.parse(peer.path.read_text(encoding="utf-8"))
        names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)} | {
            t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)
        }
        assert {"setup", "WORKERS", "invariant", "main"} <= names, peer.name


def test_table_names_the_best_strategy_and_where_it_loses() -> None:
    def campaign(strategy: str, variant: str, to_bug: int | None) -> dict:
        return {
            "program": "ddp_bucketed", "variant": variant, "strategy": strategy, "seed": 0, "executions": 10,
            "elapsed_s": 1.0, "bug_kind": "deadlock" if to_bug else None, "bug_message": None,
            "executions_to_bug": to_bug, "seconds_to_bug": 0.1 if to_bug else None, "branches_total": 20,
            "branches_covered": 18, "coverage_curve": [[1, 18]], "skipped": None,
        }

    results = {
        "config": {"budget": 10, "time_budget": 1.0, "seeds": [0], "execution_timeout": 1.0,
                   "stress_runs": 10, "stress_time": 1.0, "run_timeout": 1.0},
        "strategies": ["random", "pct"],
        "campaigns": [
            campaign("random", "main_correct", None),
            campaign("random", "main_bug_unused_expert", 1),
            campaign("random", "main_bug_early_clip", 5),
            campaign("pct", "main_correct", None),
            campaign("pct", "main_bug_unused_expert", 3),
            campaign("pct", "main_bug_early_clip", None),
        ],
        "stress": [],
        "peers": [],
    }
    table = render(results)
    assert "Best strategy: **random**" in table
    assert "against pct: random finds every bug" in table
    assert "no strategy and no stress run reported anything on a correct version" in table

