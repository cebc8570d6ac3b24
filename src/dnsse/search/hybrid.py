"""``hybrid``, the default: a portfolio of every engine, sharing one budget and one corpus.

The portfolio never loses badly to the best single engine on a program
(``benchmarks/portfolio.py`` measures it). Most small bugs fall to the first
few executions of *some* cheap scheduler, and which one differs from bug to
bug: so the first executions are diverse probes, one execution of each of
:data:`PROBES` (random, race-directed, symbolic's first run, POS, PCT
shallow, fuzz, PCT deep), before the bandit specialises. From
race-directed's probe on, aimed work takes every other execution while it
lasts, the probes included: symbolic's solved plans, else fuzz's probes of
the inputs, else the race-directed engine's promising pairs
(:mod:`dnsse.search.race_directed`: another thread's write between an
unlocked read-modify-write's read and write-back, a reader run between a
writer's two critical sections, with pairs learnt from the first executions,
whoever ran them).

After them every execution goes to one engine, picked by a discounted
upper-confidence bandit (D-UCB, Garivier and Moulines 2011): an engine's
value is the coverage and bugs its recent executions found, older results
fading by :data:`DISCOUNT` per execution, plus an exploration bonus that
grows while an engine is not played. So executions flow to whichever
engine found something recently, and an engine that dried up is still
tried now and then. A bug is credited once, to the engine that found it
first: an engine that hits a known bug again (``--keep-going``) earns
nothing for it. ``symbolic`` holding solved, unrun plans counts as a promise, since a
solved plan is a branch nobody has taken. The advisor (see
:mod:`dnsse.search.llm`) draws its hints from every execution, whoever ran it.

Every execution, whoever ran it, joins the shared corpus when it added
coverage: fuzz mutates what pct and symbolic found, and symbolic solves
along the paths fuzz found. The report shows each engine's executions, new
branches, new interleavings and bugs.
"""

from __future__ import annotations

import math
import random

from dnsse.engine.choices import Chooser
from dnsse.search.bug_family import bug_family
from dnsse.search.corpus import Corpus, EngineStats, admit
from dnsse.search.fuzz import FuzzStrategy
from dnsse.search.llm import AdvisorSetup, LlmStrategy
from dnsse.search.pct import PctStrategy
from dnsse.search.pos import PosStrategy
from dnsse.search.race_directed import RaceDirectedStrategy
from dnsse.search.random_walk import RandomStrategy
from dnsse.search.saved_learning import Rerun, corpus_state, restore_corpus, restore_stats, stats_state
from dnsse.search.strategy import Division, SharedLearning, Strategy, execution_seed
from dnsse.search.symbolic import SymbolicStrategy

DISCOUNT = 0.97
EXPLORATION = 0.5
BUG_REWARD = 10.0
PLANS_BONUS = 1.0
# Aimed executions of the race-directed engine at most: a program with hundreds of promising pairs
# would otherwise give it half the budget for long; past them it plays in the bandit like any engine.
RACE_AIMED_TRIES = 12
# The first executions, in order: cheap, diverse schedulers first, then the engines that learn.
# symbolic's first run is a random schedule on the defaults, as cheap as random's, and it starts solving.
# race-directed's first run is aimed at a pair random's run showed.
PROBES = ("random", "race-directed", "symbolic", "pos", "pct-shallow", "fuzz", "pct")


class HybridStrategy(Strategy):
    name = "hybrid"
    division = Division.ROUNDS
    wants_feedback = True

    def __init__(self, seed: int, pct_depth: int = 3, advisor: AdvisorSetup | None = None) -> None:
        self.seed = seed
        self._execution = 0
        self.corpus = Corpus()
        self.symbolic = SymbolicStrategy(seed + 1, self.corpus, admits=False)
        self.fuzz = FuzzStrategy(seed + 2, self.corpus, admits=False)
        self.race = RaceDirectedStrategy(seed + 8)
        self.engines: dict[str, Strategy] = {
            "random": RandomStrategy(seed + 5),
            "pos": PosStrategy(seed + 6),
            # Depth 1: no preemption, a random priority order (an order violation, a missed notify).
            "pct-shallow": PctStrategy(seed + 7, depth=1),
            "symbolic": self.symbolic,
            "fuzz": self.fuzz,
            "pct": PctStrategy(seed + 3, depth=pct_depth),
            "race-directed": self.race,
        }
        self.advisor = LlmStrategy(seed + 4, advisor if advisor is not None else AdvisorSetup())
        self.engines["advisor"] = self.advisor
        self.stats = {name: EngineStats() for name in self.engines}
        self._reward = {name: 0.0 for name in self.engines}
        self._plays = {name: 0.0 for name in self.engines}
        self._last: str | None = None
        # Whether the next execution is aimed work's turn (see select).
        self._aimed_turn = False
        # The bugs found so far, by family (dnsse.search.bug_family): each is credited once.
        self._bugs: set = set()

    def chooser_for(self, execution: int) -> Chooser:
        self._execution = execution + 1
        rng = random.Random(execution_seed(self.seed, execution))
        self._last = self.select(rng)
        return self.engines[self._last].chooser_for(execution)

    def select(self, rng: random.Random) -> str:
        """The engine with the highest discounted upper confidence bound (each is played once first).

        While symbolic holds solved, unrun plans, or else fuzz holds
        deterministic probes of the inputs, or else the race-directed engine
        promising pairs not yet tried (in its first :data:`RACE_AIMED_TRIES`
        aimed executions), every other execution runs them: aimed work that
        the bandit would spread over eight engines.

        The advisor plays only while it has untried hints: without one its
        execution would be a random one, which pct and fuzz do better.
        """
        engines = [name for name in self.engines if name != "advisor" or self.advisor.has_hints]
        probe = next((name for name in (*PROBES, *engines) if name in engines and self.stats[name].executions == 0), None)
        if probe is not None and self.stats["race-directed"].executions == 0:
            return probe
        # From race-directed's probe on, aimed work takes every other execution, the probes included:
        # solved plans, else fuzz's probes of the inputs, else promising racing pairs.
        aimed = [
            name
            for name, ready in (
                ("symbolic", self.symbolic.has_plans),
                ("fuzz", self.fuzz.has_pending),
                ("race-directed", self.race.has_promising and self.race.aimed < RACE_AIMED_TRIES),
            )
            if ready
        ]
        self._aimed_turn = not self._aimed_turn
        if aimed and self._aimed_turn:
            return aimed[0]
        if probe is not None:
            return probe
        total = sum(self._plays[name] for name in engines)

        def bound(name: str) -> float:
            plays = self._plays[name]
            mean = self._reward[name] / plays if plays > 0 else 0.0
            bonus = PLANS_BONUS if name == "symbolic" and self.symbolic.has_plans else 0.0
            return mean + bonus + EXPLORATION * math.sqrt(math.log(max(total, 1.0)) / max(plays, 1e-9))

        best = max(bound(name) for name in engines)
        return rng.choice([name for name in engines if bound(name) >= best - 1e-12])

    def observe(self, result) -> None:  # type: ignore[no-untyped-def]
        name = self._last
        assert name is not None, "observe() follows chooser_for()"
        self.engines[name].observe(result)
        if name != "advisor":
            self.advisor.learn(result)
        if name != "race-directed":
            self.race.learn(result)
        self.advisor.take_advice()
        stats = self.stats[name]
        stats.count(result, self._execution)
        admit(self.corpus, result, name)
        feedback = result.feedback
        reward = 0.0
        if feedback is not None:
            reward += min(feedback.new_branches + feedback.new_interleavings / 2, 5.0)
        if result.bug is not None and bug_family(result.bug) not in self._bugs:
            self._bugs.add(bug_family(result.bug))
            reward += BUG_REWARD
        for engine in self.engines:
            self._reward[engine] *= DISCOUNT
            self._plays[engine] *= DISCOUNT
        self._reward[name] += reward
        self._plays[name] += 1.0

    def engine_report(self) -> dict[str, dict[str, int]]:
        report = {name: stats.as_json() for name, stats in self.stats.items()}
        report["symbolic"].update(self.symbolic.stats.extra)
        return report

    @property
    def monitors(self) -> list:
        return self.advisor.monitors

    def advisor_report(self) -> dict[str, dict]:
        return self.advisor.advisor_report()

    def close(self) -> None:
        self.advisor.close()

    def shared_learning(self) -> SharedLearning:
        return SharedLearning(self.corpus, self.symbolic)

    def share_among(self, worker: int, workers: int) -> None:
        self.corpus.share = (worker, workers)
        for engine in self.engines.values():
            engine.share_among(worker, workers)

    def state(self) -> dict:
        """What the engines and the bandit learnt, and the shared corpus (see dnsse.search.saved_learning)."""
        return {
            "corpus": corpus_state(self.corpus),
            "engines": {name: engine.state() for name, engine in self.engines.items()},
            "stats": {name: stats_state(stats) for name, stats in self.stats.items()},
            "reward": dict(self._reward),
            "plays": dict(self._plays),
            "aimed_turn": self._aimed_turn,
            "bugs": sorted([kind, list(words)] for kind, words in self._bugs),
        }

    def restore(self, state: dict, rerun: Rerun) -> None:
        restore_corpus(self.corpus, state["corpus"], rerun)
        # A state saved before the portfolio had random, pos and pct-shallow leaves them fresh.
        for name, engine in self.engines.items():
            if name in state["engines"]:
                engine.restore(state["engines"][name], rerun)
        for name, stats in self.stats.items():
            if name in state["stats"]:
                restore_stats(stats, state["stats"][name])
        self._reward = {name: float(state["reward"].get(name, 0.0)) for name in self.engines}
        self._plays = {name: float(state["plays"].get(name, 0.0)) for name in self.engines}
        self._aimed_turn = bool(state.get("aimed_turn", False))
        self._bugs = {(str(kind), tuple(str(word) for word in words)) for kind, words in state.get("bugs", [])}

    def notes(self) -> dict[str, int]:
        """The notes of the engines that keep some (pct: spinning it caught), added up."""
        notes: dict[str, int] = {}
        for name in ("pct", "pct-shallow"):
            for key, count in self.engines[name].notes().items():
                notes[key] = notes.get(key, 0) + count
        return notes
