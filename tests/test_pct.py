"""PCT on programs that spin: fair scheduling takes over instead of a false timeout."""

from __future__ import annotations

from dnsse.engine.runner import run_execution
from dnsse.frameworks.threads.framework import ThreadsFramework
from dnsse.search.pct import STARVATION_LIMIT, PctStrategy
from helpers import load_program


def test_a_spinning_correct_program_gets_no_report_under_pct() -> None:
    target = load_program("threads_spin.py:main")
    framework = ThreadsFramework()
    strategy = PctStrategy(seed=0)
    starved = 0
    with framework.activate():
        for index in range(30):
            chooser = strategy.chooser_for(index)
            result = run_execution(target, framework, chooser)
            strategy.observe(result)
            assert result.bug is None, result.bug.render()
            starved += chooser.fair_from is not None
    # The consumer got the higher priority in some runs and spun: those runs turned fair.
    assert starved > 0


def test_the_step_estimate_ignores_the_fair_part_of_a_run() -> None:
    target = load_program("threads_spin.py:main")
    framework = ThreadsFramework()
    strategy = PctStrategy(seed=0)
    with framework.activate():
        for index in range(30):
            strategy.observe(run_execution(target, framework, strategy.chooser_for(index)))
    assert strategy.steps <= STARVATION_LIMIT + 50
