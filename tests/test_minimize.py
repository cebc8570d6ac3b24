"""Minimization: the same bug, with no more preemptions than the found schedule."""

from __future__ import annotations

from dnsse.engine.choices import ReplayChooser
from dnsse.engine.runner import run_execution
from dnsse.frameworks.threads.framework import ThreadsFramework
from dnsse.search.minimize import ShrinkingChooser, minimize
from helpers import SeededChooser, load_program


def test_minimized_schedule_reproduces_the_bug_with_fewer_preemptions() -> None:
    target = load_program("threads_counter.py:unlocked")
    framework = ThreadsFramework()
    with framework.activate():
        found = next(
            result for seed in range(200)
            if (result := run_execution(target, framework, SeededChooser(seed))).bug is not None
        )
        original = ShrinkingChooser(found.choices)
        run_execution(target, framework, original)

        def run(chooser, expected):
            return run_execution(target, framework, chooser, expected=expected)

        smaller = minimize(run, found.choices, found.bug.signature())
        assert smaller is not None
        assert smaller.bug.signature() == found.bug.signature()
        rerun = ShrinkingChooser(smaller.choices)
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


def _lost_update() -> tuple:
    target = load_program("threads_counter.py:unlocked")
    framework = ThreadsFramework()
    return target, framework


def test_no_plan_is_run_twice_and_the_result_is_the_same_bug() -> None:
    target, framework = _lost_update()
    with framework.activate():
        found = next(
            result for seed in range(200)
            if (result := run_execution(target, framework, SeededChooser(seed))).bug is not None
        )
        plans = []

        def run(chooser, expected):
            plan = list(chooser.plan)
            while plan and plan[-1] is None:
                plan.pop()
            plans.append(tuple((c.kind, c.options, c.index) if c is not None else None for c in plan))
            return run_execution(target, framework, chooser, expected=expected)

        smaller = minimize(run, found.choices, found.bug.signature())
        assert smaller is not None and smaller.bug.signature() == found.bug.signature()
        assert len(plans) == len(set(plans)) > 1


def test_the_runs_minimization_skips_are_runs_it_already_knows() -> None:
    # Skipped: the default answer where the run answered by default, and a prefix ending between two
    # non-default answers. Each must run exactly as the run it stands for.
    target, framework = _lost_update()
    with framework.activate():
        found = next(
            result for seed in range(200)
            if (result := run_execution(target, framework, SeededChooser(seed))).bug is not None
        )
        guided = ShrinkingChooser(found.choices)
        kept = run_execution(target, framework, guided)
        deviated = guided.deviated
        assert guided.deviations == len(deviated) >= 2

        def choices_of(plan):
            return [(c.kind, c.options, c.index) for c in run_execution(target, framework, ShrinkingChooser(plan)).choices]

        same = [(c.kind, c.options, c.index) for c in kept.choices]
        default_answered = [p for p in range(len(found.choices)) if p not in deviated][:5]
        for position in default_answered:
            assert choices_of(found.choices[:position] + [None] + found.choices[position + 1 :]) == same
        checked = 0
        for first, second in zip(deviated, deviated[1:]):
            ending_after_first = choices_of(found.choices[: first + 1])
            for length in range(first + 2, second + 1):
                assert choices_of(found.choices[:length]) == ending_after_first
                checked += 1
        assert checked >= 3
