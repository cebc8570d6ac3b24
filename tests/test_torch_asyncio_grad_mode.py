"""Tasks of one loop share torch's grad mode, as they share the loop's OS thread in plain Python.

The programs are in tests/real_programs/asyncio_grad_mode.py; each verdict
is checked against plain asyncio running the same coroutines.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
torch = pytest.importorskip("torch", reason="torch is not installed for this Python (it is an optional dependency)")

from dnsse.cli import main

REAL = Path(__file__).parent / "real_programs"
PROGRAMS = REAL / "asyncio_grad_mode.py"


@pytest.fixture(scope="module")
def program():
    sys.path.insert(0, str(REAL))
    try:
        import asyncio_grad_mode

        yield asyncio_grad_mode
    finally:
        sys.path.remove(str(REAL))


@pytest.mark.slow
def test_a_task_suspended_inside_no_grad_disables_grad_for_the_next_task(program, tmp_path) -> None:
    with pytest.raises(RuntimeError, match="does not require grad"):
        asyncio.run(program.serve(torch.nn.Linear(4, 3), await_inside_no_grad=True))  # plain asyncio
    report = tmp_path / "report.json"
    target = f"{PROGRAMS}:no_grad_across_await"
    status = main(
        ["check", target, "--budget", "20", "--out", str(tmp_path / "out"), "--json", str(report), "--quiet"]
    )
    assert status == 1
    bug = json.loads(report.read_text())["bugs"][0]
    assert bug["kind"] == "exception" and "does not require grad" in bug["message"], bug
    assert main(["replay", bug["trace"]]) == 1


def test_leaving_no_grad_before_awaiting_is_correct(program, tmp_path) -> None:
    asyncio.run(program.serve(torch.nn.Linear(4, 3), await_inside_no_grad=False))  # plain asyncio
    target = f"{PROGRAMS}:evaluate_then_train"
    assert main(["check", target, "--budget", "20", "--out", str(tmp_path / "out"), "--quiet"]) == 0
