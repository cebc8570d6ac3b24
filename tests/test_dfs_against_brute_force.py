"""Unbounded dfs finds whatever running every schedule finds, on generated programs.

Hypothesis writes small programs: two threads over a lock, a condition, a
dict, a list and attributes (and, for torch, ranks that send to a rank that
receives from any source). Brute force runs every schedule; dfs, with its
reduction, must still see every bug and every final state (a digest the
program emits at its end) that brute force sees. Examples are few and small
so that brute force stays cheap, and derandomized so that CI runs the same ones.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dnsse.engine.choices import Chooser
from dnsse.engine.runner import ExecutionResult, run_execution
from dnsse.engine.target import LoadedTarget, TargetSpec
from dnsse.frameworks.base import framework_named
from dnsse.search.brute_force import all_schedules
from dnsse.search.dfs import DfsStrategy

BRUTE_FORCE_LIMIT = 400
TORCH_BRUTE_FORCE_LIMIT = 2000

# One statement of a thread; {v} is a small constant.
SIMPLE_STATEMENTS = [
    "s.x = s.x + 1",
    "s.y = s.x",
    "assert s.x < 2, 'x reached 2'",
    's.table["k"] = {v}',
    'if "k" not in s.table:\n    s.table["k"] = {v}',
    's.y = s.table.get("k", 0)',
    "items = s.items\nitems.append({v})",
    "s.y = len(s.items)",
    "for key in s.table:\n    s.y = s.y + 1",
    'setattr(s, "flag", True)',
    "assert not s.flag or s.y > 0, 'flag without y'",
]
CONDITION_STATEMENTS = [
    "with s.cond:\n    s.flag = True\n    s.cond.notify()",
    "with s.cond:\n    if not s.flag:\n        s.cond.wait()",
]

PROLOGUE = '''
import threading
import dnsse


class State:
    def __init__(self):
        self.x = 0
        self.y = 0
        self.flag = False
        self.items = []
        self.table = {}
        self.lock = threading.Lock()
        self.cond = threading.Condition()
'''

EPILOGUE = '''

def main():
    s = State()
    first = threading.Thread(target=body_0, args=(s,))
    second = threading.Thread(target=body_1, args=(s,))
    first.start()
    second.start()
    first.join()
    second.join()
    dnsse.emit("final", state=repr((s.x, s.y, s.flag, s.items, sorted(s.table.items()))))
'''


@st.composite
def statements(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SIMPLE_STATEMENTS + CONDITION_STATEMENTS)).replace("{v}", str(draw(st.integers(1, 2))))
    if draw(st.integers(0, 3)) == 0:
        return "with s.lock:\n" + textwrap.indent(text, "    ")
    return text


@st.composite
def thread_programs(draw: st.DrawFn) -> str:
    bodies = []
    for index in range(2):
        lines = draw(st.lists(statements(), min_size=1, max_size=2))
        bodies.append(f"def body_{index}(s):\n" + textwrap.indent("\n".join(lines), "    ") + "\n")
    return PROLOGUE + "\n\n" + "\n\n".join(bodies) + EPILOGUE


@st.composite
def torch_programs(draw: st.DrawFn) -> str:
    """Rank 0 receives every message, each from a given rank or from any; ranks 1 and 2 send theirs."""
    # The shapes whose schedules can be counted (each step of torch's own code is one): one message
    # (90 schedules), two from one rank (402), one from each of two (1,707). Three messages make thousands.
    sends = draw(st.sampled_from([[1, 0], [2, 0], [1, 1]]))
    sources = []
    for worker, count in enumerate(sends, start=1):
        sources += [worker] * count
    pinned = [draw(st.booleans()) for _ in sources]
    order = draw(st.permutations(sources))
    receives = "\n".join(
        f"        got.append((dist.recv(buffer{', src=' + str(src) if pin else ''}), int(buffer.item())))"
        for src, pin in zip(order, pinned)
    )
    return f'''
import torch
import torch.distributed as dist
import dnsse


def main(rank, world_size):
    if rank == 0:
        got = []
        buffer = torch.zeros(1)
{receives}
        assert got[0][0] == {order[0]}, "another rank's message came first"
        dnsse.emit("final", state=repr(got))
    else:
        for index in range({sends}[rank - 1]):
            dist.send(torch.tensor([float(rank * 10 + index)]), dst=0)
'''


def outcomes(results: list[ExecutionResult]) -> tuple[set, set]:
    """The bugs, and the final states of the executions without one."""
    bugs = {r.bug.signature() for r in results if r.bug is not None}
    finals = {
        event.fields["state"] for r in results if r.bug is None for event in r.events if event.name == "final"
    }
    return bugs, finals


def compare(tmp_path: Path, source: str, world_size: int, limit: int = BRUTE_FORCE_LIMIT) -> None:
    path = tmp_path / "generated.py"
    path.write_text(source, encoding="utf-8")
    target = LoadedTarget(TargetSpec.parse(f"{path}:main"), "auto")
    framework = framework_named(target.framework, world_size)
    with framework.activate():

        def run(chooser: Chooser) -> ExecutionResult:
            return run_execution(target, framework, chooser)

        try:
            brute = [schedule.result for schedule in all_schedules(run, limit=limit)]
        except ValueError:
            assume(False)  # too many schedules to count: not a small program
        explored = exhaust(run)
    brute_bugs, brute_finals = outcomes(brute)
    dfs_bugs, dfs_finals = outcomes(explored)
    assert brute_bugs <= dfs_bugs, source
    assert brute_finals <= dfs_finals, source


def exhaust(run: Callable[[Chooser], ExecutionResult]) -> list[ExecutionResult]:
    """Every execution of dfs as ``dnsse check`` runs it (lock orders reversed in a second pass)."""
    strategy = DfsStrategy(lock_order_last=True)
    results = []
    while not strategy.exhausted:
        result = run(strategy.chooser_for(len(results)))
        strategy.observe(result)
        results.append(result)
    return results


@settings(
    max_examples=12,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture],
)
@given(source=thread_programs())
def test_dfs_sees_every_bug_and_final_state_of_generated_threaded_programs(tmp_path: Path, source: str) -> None:
    compare(tmp_path, source, world_size=2)


@pytest.mark.slow
@settings(
    max_examples=3,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture],
)
@given(source=torch_programs())
@pytest.mark.torch
def test_dfs_sees_every_bug_and_final_state_of_generated_message_passing_programs(tmp_path: Path, source: str) -> None:
    compare(tmp_path, source, world_size=3, limit=TORCH_BRUTE_FORCE_LIMIT)
