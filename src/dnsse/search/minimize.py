"""Shrink a bug's choice sequence to the fewest preemptions that still show it.

A found schedule is mostly noise: random switches that have nothing to do
with the bug. Minimization replays edited sequences and keeps an edit when
the same bug (same kind and message) comes back, as Hypothesis shrinks its
choice sequences:

0. when the found schedule preempts more than once, the default schedule
   with one different answer, tried position by position;
1. the shortest prefix of the choices that, continued without preemption,
   still shows the bug (scanned for short sequences, bisected for long ones);
2. then, choice by choice from the end and in passes until nothing improves,
   the default answer (let the current agent go on unless it spins; the first value) instead
   of the recorded one, or no answer at all (the later choices move up);
3. last, each input value towards the default and simpler values, as
   Hypothesis shrinks numbers (:mod:`dnsse.search.shrink_inputs`).

The score is the number of answers that differ from the default, i.e. the
preemptions and non-default values a person has to read. Every kept sequence
is the one recorded by the run that reproduced the bug, so it replays
strictly.

A run is determined by its plan, so no plan is run twice, nor a plan that
must run as one already run: the default answer where the kept run already
answered by default, a prefix that ends between two of its non-default
answers (it runs as the one that ends right after the first), the default
schedule again as the base of step 0. Once the default schedule failed,
every run scoring zero would be it, so a score of one ends step 2. These
skip only runs whose outcome is known: the result is the one the full
search finds, in fewer runs.

The unedited prefix of every plan was recorded by an earlier run, so each
attempt must make exactly those choices before its first edit; one that does
not shows the program is not deterministic under control
(:class:`NotDeterministic`, with where it went another way).
"""

from __future__ import annotations

import time
from typing import Callable, Sequence

from dnsse.engine.bugs import Bug
from dnsse.engine.choices import Choice, ChoiceKind, FirstChooser
from dnsse.engine.determinism import Expected
from dnsse.engine.operation import Operation
from dnsse.engine.runner import ExecutionResult
from dnsse.errors import NotDeterministic
from dnsse.search.shrink_inputs import is_same_failure, shrink_inputs
from dnsse.search.finish import Finish

# A planned answer: the recorded choice, or None for "the default here".
Plan = list[Choice | None]


class ShrinkingChooser:
    """Follows a plan while the program asks what the plan recorded; defaults after.

    The default lets the current agent go on and takes the first value; an
    agent caught spinning yields to the others (:class:`~dnsse.search.finish.Finish`),
    so a shrunk schedule of a program that polls a flag still ends.
    """

    wants_operations = True

    __slots__ = ("plan", "position", "fits", "deviations", "deviated", "default")

    def __init__(self, plan: Sequence[Choice | None]) -> None:
        self.plan = plan
        self.position = 0
        self.fits = True
        self.deviations = 0
        # The positions of the answers that differ from the default, in order.
        self.deviated: list[int] = []
        self.default = Finish(FirstChooser())

    def _planned(self, kind: str, options: int) -> int | None:
        if not self.fits or self.position >= len(self.plan):
            return None
        choice = self.plan[self.position]
        self.position += 1
        if choice is None:
            return None
        if choice.kind != kind or choice.options != options:
            self.fits = False  # the edit changed the program's path: defaults from here on
            return None
        return choice.index

    def next_agent(self, runnable: Sequence[int], current: int | None, step: int) -> int:
        raise TypeError("ShrinkingChooser needs the operations of runnable agents (wants_operations)")

    def next_agent_seeing(
        self,
        runnable: Sequence[int],
        current: int | None,
        step: int,
        operations: Sequence[Operation],
        history: Sequence[tuple[int, Operation]],
    ) -> int:
        self.default.follow(history)
        default = self.default.next_agent(runnable, current, step, operations)
        answer = self._planned(ChoiceKind.AGENT, len(runnable))
        if answer is None or answer == default:
            return default
        self.deviations += 1
        self.deviated.append(self.position - 1)
        return answer

    def next_value(self, kind: str, options: int) -> int:
        answer = self._planned(kind, options)
        if not answer:
            return 0
        self.deviations += 1
        self.deviated.append(self.position - 1)
        return answer


def minimize(
    run: Callable[[ShrinkingChooser, Expected], ExecutionResult],
    choices: list[Choice],
    signature: tuple[str, str],
    max_attempts: int = 300,
    max_seconds: float = 10.0,
) -> ExecutionResult | None:
    """The run with the smallest-scoring choices found that reproduces ``signature``.

    ``run(chooser, expected)`` runs the target once, checking its choices
    against ``expected``. ``None`` when even the unedited choices do not
    reproduce the bug under guided replay (then the found trace is kept as it
    is); NotDeterministic when a run left the recorded choices of a plan.
    """
    deadline = time.perf_counter() + max_seconds
    attempts = 0
    # The non-default positions of each reproducing run, by the run's id (the runs stay in outcomes).
    positions: dict[int, list[int]] = {}
    # What each plan run so far showed, by its answers: the same plan is the same run.
    outcomes: dict[tuple[tuple[str, int, int] | None, ...], tuple[ExecutionResult, int]] = {}
    # The bug's failure, whatever values its message shows: what an input's new value must still show.
    origin: list[Bug] = []

    # The run of the default schedule (the empty plan), once it ran.
    default_runs: list[ExecutionResult] = []

    def attempt(plan: Plan, trusted: int, same_failure: bool = False) -> tuple[ExecutionResult, int] | None:
        """Run ``plan``, whose first ``trusted`` answers are the recorded choices of an earlier run.

        The run counts when it shows the same bug, or with ``same_failure``
        the same failure with other values in its message.
        """
        nonlocal attempts
        key = _key(plan)
        if key not in outcomes:
            attempts += 1
            chooser = ShrinkingChooser(plan)
            result = run(chooser, Expected([c for c in plan[:trusted] if c is not None], complete=False))
            if result.divergence is not None:
                raise NotDeterministic(result.divergence)
            if not key:
                default_runs.append(result)
            positions[id(result)] = chooser.deviated
            outcomes[key] = result, chooser.deviations
        result, deviations = outcomes[key]
        if result.bug is None:
            return None
        if result.bug.signature() == signature or same_failure and origin and is_same_failure(result.bug, origin[0]):
            return result, deviations
        return None

    def budget_left() -> bool:
        return attempts < max_attempts and time.perf_counter() < deadline

    baseline = attempt(list(choices), len(choices))
    if baseline is None:
        return None
    origin.append(baseline[0].bug)  # type: ignore[arg-type]
    best, best_score = baseline
    if best_score == 0:
        return best
    plain = attempt([], 0)
    if plain is not None:
        return plain[0]

    # A bug that one preemption shows is found directly: the default schedule
    # with a single different answer, position by position.
    if best_score > 1:
        default_run = default_runs[0]
        for position, choice in enumerate(default_run.choices):
            if not budget_left():
                break
            for answer in range(min(choice.options, 8)):
                if answer == choice.index:
                    continue
                plan: Plan = list(default_run.choices[:position]) + [Choice(choice.kind, choice.options, answer)]
                found = attempt(plan, position)
                if found is not None and found[1] < best_score:
                    best, best_score = found
                    break
            if best_score <= 1:
                break

    # Whether a prefix reproduces is not monotone in its length, so short
    # sequences are scanned from the shortest prefix up; long ones bisected.
    if 2 * len(best.choices) <= max_attempts:
        # A prefix that ends between two non-default answers runs as the one that ends right after
        # the first of them (the answers between are the default's): only those are tried.
        ends = {0} | {position + 1 for position in positions.get(id(best), ())}
        for length in range(len(best.choices)):
            if length not in ends:
                continue
            found = attempt(list(best.choices[:length]), length)
            if found is not None and found[1] <= best_score:
                best, best_score = found
                break
    else:
        low, high = 0, len(best.choices)
        while low < high and budget_left():
            middle = (low + high) // 2
            found = attempt(list(best.choices[:middle]), middle)
            if found is not None and found[1] <= best_score:
                best, best_score = found
                high = min(middle, len(best.choices))
            else:
                low = middle + 1

    # Every run that scores zero is the default schedule, which does not show the bug:
    # no edit can improve a score of one.
    improved = True
    while improved and best_score > 1 and budget_left():
        improved = False
        index = len(best.choices) - 1
        while index >= 0 and budget_left():
            current: Plan = list(best.choices)
            # Two edits per position: answer by default, or drop the choice so
            # the later ones shift into its place. Answering by default where
            # the run already did is the same run: only the second is tried there.
            edits = [current[:index] + current[index + 1 :]]
            if index in positions.get(id(best), ()):
                edits.insert(0, current[:index] + [None] + current[index + 1 :])
            for plan in edits:
                found = attempt(plan, index)
                if found is not None and found[1] < best_score:
                    best, best_score = found
                    improved = True
                    break
            index = min(index, len(best.choices)) - 1

    # 3. The input values, each as simple as the bug allows (dnsse.search.shrink_inputs).
    def try_index(kept: ExecutionResult, position: int, answer: int) -> ExecutionResult | None:
        nonlocal best_score
        plan: Plan = list(kept.choices)
        chosen = kept.choices[position]
        plan[position] = Choice(chosen.kind, chosen.options, answer)
        found = attempt(plan, position, same_failure=True)
        if found is None or found[1] > max(best_score, 1):
            return None
        best_score = found[1]
        return found[0]

    return shrink_inputs(best, try_index, budget_left)


def _key(plan: Plan) -> tuple[tuple[str, int, int] | None, ...]:
    """The answers of ``plan``; answering by default after its end is what the chooser does anyway."""
    end = len(plan)
    while end and plan[end - 1] is None:
        end -= 1
    return tuple((c.kind, c.options, c.index) if c is not None else None for c in plan[:end])
