"""symbolic asks IEEE floating point where real arithmetic is not the program's."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import z3

from dnsse.campaign.config import CampaignConfig, CampaignResult
from dnsse.campaign.run import run_campaign
from dnsse.campaign.control import CampaignControl
from dnsse.campaign.resume import load_state
from dnsse.symbolic.floating import Undecided, Unsupported, solve_fp
from tests.helpers import PROGRAMS


def symbolic(target: str, tmp_path: Path, budget: int = 10) -> CampaignResult:
    return run_campaign(
        CampaignConfig(
            target=str(PROGRAMS / target), strategy="symbolic", budget=budget, out=tmp_path, minimize=False
        )
    )


def test_an_absorbed_addend_has_no_real_solution_and_a_double_one(tmp_path: Path) -> None:
    result = symbolic("floating_inputs.py:absorbed", tmp_path)
    assert [bug.bug.message for bug in result.bugs][0].startswith("AssertionError: 1e16 vanished")
    counts = result.engines["symbolic"]
    assert counts["solved"] == 0 and counts["fp_solved"] >= 1 and counts["confirmed"] >= 1
    x = float(result.bugs[0].inputs["x"])
    assert x + 1e16 == x and abs(x) <= 1e40


def test_a_float16_cast_differs_from_its_input_only_in_floating_point(tmp_path: Path) -> None:
    result = symbolic("floating_inputs.py:half_cast", tmp_path)
    assert result.bugs and "float16 rounded" in result.bugs[0].bug.message
    assert result.engines["symbolic"]["fp_solved"] >= 1


def test_an_unconfirmed_real_model_of_a_float16_overflow_is_solved_again_in_float16(tmp_path: Path) -> None:
    result = symbolic("floating_inputs.py:half_overflow", tmp_path)
    assert result.bugs and "became inf" in result.bugs[0].bug.message
    counts = result.engines["symbolic"]
    assert counts["unconfirmed"] >= 1 and counts["fp_queries"] >= 1 and counts["fp_solved"] >= 1
    assert float(result.bugs[0].inputs["a"]) >= 65520.0


def test_the_json_report_counts_floating_point_queries(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    done = subprocess.run(
        [sys.executable, "-m", "dnsse.cli", "check", f"{PROGRAMS}/floating_inputs.py:absorbed", "--strategy",
         "symbolic", "--budget", "10", "--out", str(tmp_path), "--json", str(report)],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    counts = json.loads(report.read_text())["engines"]["symbolic"]
    assert counts["queries"] >= 1 and counts["fp_queries"] >= 1 and counts["fp_solved"] >= 1


def test_a_model_in_floating_point_holds_when_python_computes_it() -> None:
    x, y = z3.Real("x"), z3.Real("y")
    model = solve_fp([x + 1e16 == x, y * 3 == 1, x > 0], [x <= 1e40, y >= 0], {}, 5000)
    assert model is not None
    assert model["x"] + 1e16 == model["x"] and model["y"] * 3 == 1


def test_a_query_with_no_floating_point_solution_gives_none() -> None:
    x = z3.Real("x")
    assert solve_fp([x + 1 == x], [x >= 0, x <= 10], {}, 5000) is None


def test_integer_modulo_is_unsupported_in_floating_point() -> None:
    n = z3.Int("n")
    with pytest.raises(Unsupported):
        solve_fp([n % 7 == 3], [], {}, 1000)


def _outcome(result: CampaignResult) -> tuple:
    return result.executions, [(bug.execution, bug.bug.message) for bug in result.bugs], result.engines


def test_a_resumed_campaign_asks_the_pending_floating_point_queries_as_the_uninterrupted_one(tmp_path: Path) -> None:
    config = CampaignConfig(
        target=str(PROGRAMS / "floating_inputs.py:half_overflow"), strategy="symbolic", budget=12,
        keep_going=True, out=tmp_path / "whole", minimize=False,
    )
    whole = run_campaign(config)
    out = tmp_path / "stopped"
    out.mkdir()
    control = CampaignControl(out)

    def stop_after_two(number: int, result: object, arcs: object) -> None:
        if number == 2:
            control.stop_signal = signal.SIGINT

    run_campaign(replace(config, out=out), on_execution=stop_after_two, control=control)
    saved = load_state(out)
    # The pending plan keeps what its floating-point retry needs (rebuilt at resume).
    assert saved.executions == 2 and any(plan["ask"] is not None for plan in saved.strategy_state["plans"])
    resumed = run_campaign(replace(config, out=out), control=CampaignControl(out, resume=saved))
    assert _outcome(resumed) == _outcome(whole)
    assert whole.engines is not None and whole.engines["symbolic"]["fp_solved"] >= 2


def test_a_query_out_of_time_is_undecided_not_unsolvable() -> None:
    x = z3.Real("x")
    with pytest.raises(Undecided):
        solve_fp([x + 1e16 == x, x > 0], [x <= 1e40], {}, 1)


@pytest.mark.parametrize(("answer", "asked"), [("undecided", 2), ("none", 3)])
def test_floating_point_queries_end_after_two_undecided_in_a_row(
    answer: str, asked: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A query z3 cannot decide in its time costs that time; one it answers (even "no values") costs little.
    def solve(*arguments: object) -> None:
        if answer == "undecided":
            raise Undecided
        return None

    monkeypatch.setattr("dnsse.search.symbolic.solve_fp", solve)
    result = symbolic("floating_inputs.py:half_overflow", tmp_path, budget=12)
    counts = result.engines["symbolic"]
    assert result.executions == 12 and counts["fp_solved"] == 0
    assert counts["fp_queries"] == asked if answer == "undecided" else counts["fp_queries"] >= asked
