"""What the coverage-guided strategies learnt, as JSON, so that ``--resume`` goes on where they were.

``fuzz``, ``symbolic`` and ``hybrid`` learn from every execution: the
corpus, what each engine counted, the dictionary and the pending mutants of
fuzz, the plans and the taken branch sides of symbolic, hybrid's bandit, and
the campaign's coverage map that decides what is new. All of it is saved as
plain JSON (never pickle). A corpus entry also holds the steps its execution
took (for the races a mutation reverses); those are not saved but rebuilt at
resume by running the entry's recorded choices again, which repeats the
execution exactly (the same choices make the same run, or the trace of a bug
could not replay). A resumed campaign thus makes the choices the
uninterrupted one would have made, and finds the bugs it would have found.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from dnsse.coverage.arcs import arcs_as_json, restore_arcs
from dnsse.coverage.feedback import CoverageMap
from dnsse.engine.choices import Choice
from dnsse.search.corpus import Corpus, CorpusEntry, EngineStats

if TYPE_CHECKING:
    from dnsse.engine.runner import ExecutionResult
    from dnsse.symbolic.concolic import Concolic

# Runs the target once along recorded choices; ``concolic``: with the stand-in inputs fuzz and symbolic give,
# or with those of the given Concolic, whose log then holds the run's conditions (symbolic rebuilds its asks so).
Rerun = Callable[[list[Choice], "bool | Concolic"], "ExecutionResult"]
# Engines that ran their executions with concolic stand-in inputs.
CONCOLIC_ORIGINS = frozenset({"fuzz", "symbolic"})


def choices_json(choices: list[Choice]) -> list:
    return [choice.to_json() for choice in choices]


def choices_from(raw: list) -> list[Choice]:
    return [Choice.from_json(item) for item in raw]


def entry_state(entry: CorpusEntry) -> dict:
    return {
        "choices": choices_json(entry.choices),
        "new_branches": entry.new_branches,
        "new_interleavings": entry.new_interleavings,
        "origin": entry.origin,
        "score": entry.score,
        "picks": entry.picks,
        "finds": entry.finds,
        # Where workers share the corpus: the order the parent merged it in (see dnsse.search.corpus_share).
        "key": entry.key,
    }


def entry_from(state: dict, rerun: Rerun) -> CorpusEntry:
    """The entry saved as ``state``, its steps rebuilt by running its choices again."""
    choices = choices_from(state["choices"])
    result = rerun(choices, state["origin"] in CONCOLIC_ORIGINS)
    return CorpusEntry(
        choices=choices,
        inputs=dict(result.inputs),
        history=list(result.history),
        created_at=list(result.created_at),
        new_branches=int(state["new_branches"]),
        new_interleavings=int(state["new_interleavings"]),
        origin=str(state["origin"]),
        score=float(state["score"]),
        picks=int(state["picks"]),
        finds=int(state["finds"]),
        key=None if state.get("key") is None else int(state["key"]),
    )


def corpus_state(corpus: Corpus) -> list[dict]:
    return [entry_state(entry) for entry in corpus.entries]


def restore_corpus(corpus: Corpus, state: list[dict], rerun: Rerun) -> None:
    corpus.entries = [entry_from(entry, rerun) for entry in state]


def stats_state(stats: EngineStats) -> dict:
    return {
        "executions": stats.executions,
        "new_branches": stats.new_branches,
        "new_interleavings": stats.new_interleavings,
        "bugs": stats.bugs,
        "extra": dict(stats.extra),
        "first_bug_execution": stats.first_bug_execution,
        "signatures": sorted([list(signature) for signature in stats._signatures]),
    }


def restore_stats(stats: EngineStats, state: dict) -> None:
    stats.executions = int(state["executions"])
    stats.new_branches = int(state["new_branches"])
    stats.new_interleavings = int(state["new_interleavings"])
    stats.bugs = int(state["bugs"])
    stats.extra = {str(name): int(count) for name, count in state["extra"].items()}
    first = state["first_bug_execution"]
    stats.first_bug_execution = None if first is None else int(first)
    stats._signatures = {(str(kind), str(message)) for kind, message in state["signatures"]}


def coverage_state(coverage: CoverageMap) -> dict:
    """The branches and interleavings a campaign has seen, and the raw arcs they came from."""
    return {
        "arcs": arcs_as_json(coverage.recorder),
        "branches": sorted([path, list(arc)] for path, arc in coverage.branches),
        "interleavings": sorted([list(pair) for pair in coverage.interleavings]),
    }


def restore_coverage(coverage: CoverageMap, state: dict) -> None:
    restore_arcs(coverage.recorder, state["arcs"])
    coverage.branches = {(str(path), (int(arc[0]), int(arc[1]))) for path, arc in state["branches"]}
    coverage.interleavings = {
        (int(first), str(kind), int(second), str(other), str(name))
        for first, kind, second, other, name in state["interleavings"]
    }
