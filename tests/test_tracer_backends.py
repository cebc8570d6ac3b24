"""sys.monitoring (CPython 3.12+) and sys.settrace give the same campaigns on one interpreter.

Shared-state points and branch coverage come from ``sys.monitoring`` where
the interpreter has it and from ``sys.settrace`` otherwise
(``DNSSE_TRACER=settrace`` asks for settrace on any Python). Same seed, same
executions, same schedules, same bugs, same coverage, whichever records them.
"""

from __future__ import annotations

import sys
import textwrap
import types
from pathlib import Path

import pytest

from dnsse.frameworks.threads.stack_depth import stack_depths
from dnsse.campaign.config import CampaignConfig
from dnsse.campaign.run import run_campaign

PROGRAMS = Path(__file__).parent / "programs"

needs_monitoring = pytest.mark.skipif(not hasattr(sys, "monitoring"), reason="sys.monitoring needs Python 3.12+")

# A lost update behind a branch that only some inputs and schedules take; a generator and a handler for the arcs.
FUZZED = textwrap.dedent(
    """
    import threading

    import dnsse


    class Account:
        def __init__(self):
            self.balance = 0
            self.log = []


    def deposits(n):
        for i in range(n):
            if i % 2:
                yield i


    def deposit(account, amount):
        try:
            for extra in deposits(amount):
                current = account.balance
                account.balance = current + extra
        except ValueError:
            account.log.append("bad")
        if amount > 3:
            account.log.append(amount)


    def main(amount: dnsse.Range(0, 8) = 2):
        account = Account()
        threads = [threading.Thread(target=deposit, args=(account, amount)) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if amount > 5:
            assert account.balance == 2 * sum(deposits(amount)), account.balance
    """
)


def _campaign(monkeypatch: pytest.MonkeyPatch, tracer: str, **settings: object) -> tuple[list, list, object]:
    monkeypatch.setenv("DNSSE_TRACER", tracer)
    runs: list = []

    def seen(number: int, result: object, arcs: object) -> None:
        runs.append((number, [c.to_json() for c in result.choices], [op.kind for _, op in result.history],
                     result.feedback.new_branches if result.feedback is not None else None))

    result = run_campaign(CampaignConfig(**settings), on_execution=seen)  # type: ignore[arg-type]
    bugs = [(bug.bug.kind, bug.bug.message) for bug in result.bugs]
    return runs, bugs, result.coverage


@pytest.mark.skipif(sys.version_info[:2] != (3, 13), reason="3.12.1's settrace misses opcode events; 3.11 has no sys.monitoring")
@pytest.mark.parametrize(("target", "strategy"), [("search_threads.py:lost_update", "random"),
                                                  ("search_threads.py:order_violation", "pos"),
                                                  ("dpor_threads.py:check_then_act", "dfs")])
def test_shared_state_points_are_the_same_either_way(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, target: str, strategy: str
) -> None:
    settings = dict(target=f"{PROGRAMS / target}", framework="threads", strategy=strategy, budget=25, seed=3,
                    keep_going=True, minimize=False)
    traced = _campaign(monkeypatch, "settrace", out=tmp_path / "settrace", **settings)
    monitored = _campaign(monkeypatch, "monitoring", out=tmp_path / "monitoring", **settings)
    assert monitored == traced
    runs, bugs, _ = monitored
    assert bugs, "the program's race is found"
    shared = {"attr.load", "attr.store", "item.load", "item.store", "global.load", "global.store", "cell.load",
              "cell.store", "call", "contains", "iterate"}
    assert any(kind in shared for _, _, kinds, _ in runs for kind in kinds), "shared-state points were made"


@needs_monitoring
def test_coverage_feedback_is_the_same_either_way(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "fuzzed.py"
    path.write_text(FUZZED, encoding="utf-8")
    settings = dict(target=f"{path}:main", framework="threads", strategy="fuzz", budget=30, seed=5,
                    keep_going=True, minimize=False)
    traced = _campaign(monkeypatch, "settrace", out=tmp_path / "settrace", **settings)
    monitored = _campaign(monkeypatch, "monitoring", out=tmp_path / "monitoring", **settings)
    assert monitored == traced
    runs, _, coverage = monitored
    assert coverage is not None and coverage.branches_covered > 0
    assert sum(new for *_, new in runs) > 1, "executions after the first found new branches"


def _code_objects(code: types.CodeType):
    yield code
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _code_objects(constant)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="3.11 stores the stack pointer; depths are computed on 3.12+")
def test_stack_depths_agree_on_every_path_and_fit_the_frame() -> None:
    import asyncio.tasks
    import threading

    files = [threading.__file__, asyncio.tasks.__file__, *map(str, PROGRAMS.glob("*.py"))]
    checked = 0
    for filename in files:
        module = compile(Path(filename).read_text(encoding="utf-8"), filename, "exec")
        for code in _code_objects(module):
            depths = stack_depths(code)  # raises InconsistentDepth where two paths disagree
            assert depths and 0 <= min(depths.values()) and max(depths.values()) <= code.co_stacksize
            checked += 1
    assert checked > 500
