"""The record a scheduling point makes of its choice says what the checked path says.

Where nothing checks the choices, a point asks the chooser itself and
records a tuple, made a ``Choice`` only when the choices are read, with the
line the agent stood at looked up from its frame's last instruction
(``dnsse.engine.choices.agent_choice``). A run that follows a trace checks
every choice as it is made, through ``Execution.describe`` and the frame's
``f_lineno``: it must find the same agent, operation and line at each one.
"""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from dnsse.engine.choices import ChoiceKind, ReplayChooser
from dnsse.engine.determinism import Expected
from dnsse.engine.location import line_at
from dnsse.engine.runner import run_execution
from dnsse.frameworks.base import framework_named
from helpers import SeededChooser, load_program


def test_the_line_of_a_last_instruction_is_the_frames_line() -> None:
    checked: list[int] = []
    wrong: list[tuple[str, int, int | None, int | None]] = []

    def trace(frame, event, arg):  # type: ignore[no-untyped-def]
        frame.f_trace_opcodes = True
        outer = frame
        while outer is not None:
            line = line_at(outer.f_code, outer.f_lasti)
            checked.append(1)
            if line != outer.f_lineno:
                wrong.append((outer.f_code.co_name, outer.f_lasti, line, outer.f_lineno))
            outer = outer.f_back
        return trace

    sys.settrace(trace)
    try:
        json.dumps({"a": [1, 2, {"b": 3}], "c": "d"}, indent=2)
        textwrap.dedent("  x\n    y\n  z")
    finally:
        sys.settrace(None)
    assert len(checked) > 1000
    assert wrong == []


@pytest.mark.parametrize(
    "spec", ["threads_counter.py:unlocked", "threads_counter.py:locked", "threads_lock_order.py:main"]
)
def test_each_recorded_choice_is_what_a_checked_replay_finds(spec: str) -> None:
    target = load_program(spec)
    framework = framework_named(target.framework, 2)
    with framework.activate():
        for seed in range(6):
            recorded = run_execution(target, framework, SeededChooser(seed))
            choices = list(recorded.choices)
            agent_choices = [choice for choice in choices if choice.kind == ChoiceKind.AGENT]
            assert agent_choices and all(choice.chosen is not None for choice in agent_choices)
            assert any(choice.chosen.where.startswith(target.spec.path.name) for choice in agent_choices)  # type: ignore[union-attr]
            followed = run_execution(target, framework, ReplayChooser(choices), expected=Expected(choices))
            assert followed.divergence is None, followed.divergence
            assert [choice.to_json() for choice in followed.choices] == [choice.to_json() for choice in choices]
            assert (followed.bug and followed.bug.signature()) == (recorded.bug and recorded.bug.signature())
