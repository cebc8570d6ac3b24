"""Executions leave the interpreter's hooks and recursion limit as they found them.

torch's ``init_process_group`` wraps ``sys.excepthook`` on every call; a
program may set ``threading.excepthook`` or the recursion limit. Left in
place, a long campaign nests the wrappers until the process's first
uncaught exception overflows the stack, and the hooks of one execution
change what the next one does.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from dnsse.campaign.config import CampaignConfig
from dnsse.campaign.run import run_campaign

PROGRAMS = Path(__file__).parent / "programs"


def _hooks() -> tuple:
    return sys.excepthook, threading.excepthook, sys.unraisablehook, sys.getrecursionlimit()


@pytest.mark.torch
def test_torch_ranks_do_not_stack_excepthooks_across_executions(tmp_path: Path) -> None:
    before = _hooks()
    result = run_campaign(
        CampaignConfig(
            target=f"{PROGRAMS / 'torch_values.py'}:checked", framework="torch", world_size=2,
            strategy="random", budget=4, out=tmp_path / "out",
        )
    )
    assert result.executions == 4 and not result.bugs
    assert _hooks() == before


def test_a_program_that_changes_the_hooks_gets_them_back_each_execution(tmp_path: Path) -> None:
    program = tmp_path / "hooks.py"
    program.write_text(
        "import sys, threading\n"
        "def main():\n"
        "    # Each execution must start from the interpreter's own hooks.\n"
        "    assert getattr(sys.excepthook, 'mine', False) is False\n"
        "    assert sys.getrecursionlimit() != 123456\n"
        "    def hook(*args): pass\n"
        "    hook.mine = True\n"
        "    sys.excepthook = hook\n"
        "    threading.excepthook = hook\n"
        "    sys.setrecursionlimit(123456)\n"
    )
    before = _hooks()
    result = run_campaign(
        CampaignConfig(target=f"{program}:main", framework="threads", budget=3, out=tmp_path / "out")
    )
    assert result.executions == 3 and not result.bugs
    assert _hooks() == before
