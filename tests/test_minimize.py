"""Minimization: the same bug, with no more preemptions than the found schedule."""

from __future__ import annotations

from dnsse.engine.choices import ReplayChooser
from dnsse.engine.runner import run_execution
from dnsse.frameworks.threads.framework import ThreadsFramework
from dnsse.report.minimize import GuidedChooser, minimize
from helpers import SeededChooser, load_program


def test_minimized_schedule_reproduces_the_bug_with_fewer_preemptions() -> None:
    target = load_program("threads_counter.py:unlocked")
    framework = ThreadsFramework()
    with framework.activate():
        found = next(
            result for seed in range(200)
            if (result := run_execution(target, framework, SeededChooser(seed))).bug is not None
        )
        original = GuidedChooser(found.choices)
        run_execution(target, framework, original)

        def run(chooser, expected):
            return run_execution(target, framework, chooser, expected=expected)

        smaller = minimize(run, found.choices, found.bug.signature())
        assert smaller is not None
        assert smaller.bug.signature() == found.bug.signature()
        rerun = GuidedChooser(smaller.choices)
        run_execution(target, framework, rerun)
        # Random schedules preempt often; the same lost update needs far fewer.
        assert original.deviations >= 4
        assert rerun.deviations < original.deviations
        replayed = run_execution(target, framework, ReplayChooser(smaller.choices))
        assert replayed.divergence is None
        assert replayed.bug.signature() == found.bug.signature()


def test_a_bug_that_guided_replay_cannot_reproduce_is_left_alone() -> None:
    target = load_program("threads_counter.py:locked")
    framework = ThreadsFramework()
    with framework.activate():
        result = run_execution(target, framework, SeededChooser(1))
        assert result.bug is None
        assert minimize(lambda c, e: run_execution(target, framework, c, expected=e), result.choices, ("exception", "x")) is None
