"""Race-directed search: aim each execution at one pair of conflicting sites a run showed.

RaceFuzzer (Sen, PLDI 2008) runs a program once, finds the races of that
run, then aims each further execution at one of them: a thread about to
perform one side of the race is held back until another is about to perform
the other side, and the two then go in a chosen order. A bug that needs one
exact interleaving among many threads (a reader between a writer's two
critical sections, with 99 writers about) is a coin toss per execution for
this search, where a random or priority scheduler almost never hits it.

Here the races are :class:`~dnsse.search.race_pairs.RacingPair`\\ s of sites
(:mod:`dnsse.search.race_pairs`), learnt from the first executions of the
campaign, whoever ran them. An execution aimed at ``first -> second``:

- holds back an agent about to run the ``second`` site until an agent has
  just run the ``first``; holds back an agent about to run the ``first``
  site until some agent waits at the ``second`` (when every agent that can
  run is held back, one at the ``first`` goes, or any);
- right after the ``first`` step, runs an agent waiting at the ``second``
  before anyone else (the agent of the ``first`` step stays where it is
  while another can run), then keeps that agent running: in the ``through``
  mode while it can, in the ``one section`` mode up to its next release of
  a lock, after which the agent of the ``first`` step goes on first (another
  thread's whole critical section between two of this one's);
- chooses every other step at random, as ``random`` does.

Holding an agent back must not starve it: an agent caught spinning (see
:mod:`dnsse.engine.spin_watch`) may be waiting for the one held back, so it
counts as held too, and a favoured agent caught spinning ends the aim.

Each pair is tried in both modes, the pairs in their order; then the search
goes round again with fresh random choices. Until a run has shown a pair,
executions are random.
"""

from __future__ import annotations

import random
from typing import Sequence

from dnsse.engine.operation import Access, Operation
from dnsse.engine.spin_watch import SpinWatch
from dnsse.search.race_pairs import RacingPair, racing_pairs, role_of
from dnsse.search.random_walk import blind_value
from dnsse.search.strategy import Strategy, execution_seed

MODES = ("through", "one section")
# Executions whose pairs are learnt: later runs mostly show the same pairs again.
LEARNING_RUNS = 3
# Pairs of this rank or better (race_pairs: lost updates, lock hand-overs, reads against writes of
# another role) are promising.
PROMISING_RANK = 2
# Scheduling choices an execution spends holding agents back: past them it gives up its aim.
AIMING_CHOICES = 5_000

_WAITING, _ARMED, _BOOSTED, _RESUMING, _DONE = range(5)


class RaceDirectedChooser:
    """The choices of one execution aimed at ``pair`` (``None``: random) in ``mode``."""

    wants_operations = True

    __slots__ = ("rng", "pair", "through", "roles", "phase", "first_agent", "boosted", "seen_steps", "choices", "watch")

    def __init__(self, seed: int, pair: RacingPair | None, mode: str, roles: Sequence[str]) -> None:
        self.rng = random.Random(seed)
        self.pair = pair
        self.through = mode == "through"
        self.roles = roles
        self.phase = _WAITING if pair is not None else _DONE
        self.first_agent: int | None = None
        self.boosted: int | None = None
        self.seen_steps = 0
        self.choices = 0
        self.watch = SpinWatch()

    def next_agent(self, runnable: Sequence[int], current: int | None, step: int) -> int:
        raise TypeError("RaceDirectedChooser needs the operations of runnable agents (wants_operations)")

    def next_agent_seeing(
        self,
        runnable: Sequence[int],
        current: int | None,
        step: int,
        operations: Sequence[Operation],
        history: Sequence[tuple[int, Operation]],
    ) -> int:
        if self.phase == _DONE:
            return self.rng.randrange(len(runnable))
        if self.seen_steps != len(history):
            self._follow(history)
        self.choices += 1
        if self.choices > AIMING_CHOICES:
            self.phase = _DONE
            return self.rng.randrange(len(runnable))
        phase = self.phase
        if phase == _WAITING:
            return self._while_waiting(runnable, operations)
        moving = self.watch.moving(runnable, operations)
        if phase == _ARMED:
            seconds = [i for i in moving if runnable[i] != self.first_agent and self._at(runnable[i], operations[i], second=True)]
            if seconds:
                return self.rng.choice(seconds)
            others = [i for i in moving if runnable[i] != self.first_agent]
            if others:
                return self.rng.choice(others)
            # Only the agent of the first step can move on: the moment passes.
            return runnable.index(self.first_agent) if self.first_agent in runnable else self.rng.randrange(len(runnable))
        favoured = self.boosted if phase == _BOOSTED else self.first_agent
        if favoured in runnable and runnable.index(favoured) in moving:
            return runnable.index(favoured)
        # The favoured agent is blocked, finished or spinning: the aim is spent.
        self.phase = _DONE
        return self.rng.randrange(len(runnable))

    def _while_waiting(self, runnable: Sequence[int], operations: Sequence[Operation]) -> int:
        firsts = [i for i, agent in enumerate(runnable) if self._at(agent, operations[i], second=False)]
        seconds = [i for i, agent in enumerate(runnable) if self._at(agent, operations[i], second=True)]
        if firsts and seconds:
            # An agent at the first site, while another waits at the second (indices are distinct agents).
            ready = [i for i in firsts if seconds[0] != i or len(seconds) > 1]
            if ready:
                return self.rng.choice(ready)
        held = set(seconds) | set(firsts)
        free = [i for i in self.watch.moving(runnable, operations) if i not in held]
        if free:
            return self.rng.choice(free)
        if held:
            return self.rng.choice(firsts or seconds)
        return self.rng.randrange(len(runnable))

    def _at(self, agent: int, operation: Operation, second: bool) -> bool:
        pair = self.pair
        assert pair is not None
        site = pair.second if second else pair.first
        if operation.kind != site[1] or operation.detail != site[2]:
            return False
        roles = self.roles
        return (roles[agent] if agent < len(roles) else "?") == site[0]

    def _follow(self, history: Sequence[tuple[int, Operation]]) -> None:
        """Move the aim along the steps taken since the last choice (some were nobody's choice)."""
        self.watch.follow(history)
        for agent, operation in history[self.seen_steps :]:
            phase = self.phase
            if phase == _WAITING:
                if self._at(agent, operation, second=False):
                    self.phase, self.first_agent = _ARMED, agent
            elif phase == _ARMED:
                if agent != self.first_agent and self._at(agent, operation, second=True):
                    self.phase, self.boosted = _BOOSTED, agent
                elif agent == self.first_agent:
                    # It went on before anyone ran the second site: wait for its next chance.
                    self.phase = _WAITING
                    if self._at(agent, operation, second=False):
                        self.phase = _ARMED
            elif phase == _BOOSTED:
                if not self.through and agent == self.boosted and any(a is Access.RELEASE for _, a in operation.objects):
                    self.phase = _RESUMING
            if self.phase == _DONE:
                break
        self.seen_steps = len(history)

    def next_value(self, kind: str, options: int) -> int:
        return blind_value(self.rng, options)


class RaceDirectedStrategy(Strategy):
    """Aims executions at the racing pairs learnt from the first runs, each pair in each mode, round after round."""

    name = "race-directed"

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.pairs: list[RacingPair] = []
        self.roles: list[str] = []
        self.learnt_from = 0
        self.aimed = 0  # executions aimed so far: the next one takes pair aimed // 2 (mod), mode aimed % 2

    @property
    def has_promising(self) -> bool:
        """Whether a pair of rank :data:`PROMISING_RANK` or better has not been tried in every mode yet."""
        tried = self.aimed // len(MODES)
        return tried < len(self.pairs) and self.pairs[tried].rank <= PROMISING_RANK

    def chooser_for(self, execution: int) -> RaceDirectedChooser:
        seed = execution_seed(self.seed, execution)
        if not self.pairs:
            return RaceDirectedChooser(seed, None, MODES[0], self.roles)
        index = self.aimed % (len(self.pairs) * len(MODES))
        self.aimed += 1
        return RaceDirectedChooser(seed, self.pairs[index // len(MODES)], MODES[index % len(MODES)], self.roles)

    def learn(self, result) -> None:  # type: ignore[no-untyped-def]
        """Add the pairs this execution shows (only the first few executions are read)."""
        if self.learnt_from >= LEARNING_RUNS or not result.history:
            return
        self.learnt_from += 1
        if len(result.agent_names) > len(self.roles):
            self.roles = [role_of(name) for name in result.agent_names]
        known = set(self.pairs)
        new = [pair for pair in racing_pairs(result.history, result.agent_names, result.created_at) if pair not in known]
        if new and self.aimed < len(self.pairs) * len(MODES):
            # In the first round, the pairs not tried yet stay in rank order.
            tried = -(-self.aimed // len(MODES))
            self.pairs[tried:] = sorted(self.pairs[tried:] + new, key=lambda pair: pair.rank)
        else:
            self.pairs.extend(new)

    def observe(self, result) -> None:  # type: ignore[no-untyped-def]
        self.learn(result)

    def state(self) -> dict:
        """What this strategy learnt, for a resumed campaign (see dnsse.campaign.resume)."""
        return {
            "pairs": [pair.as_json() for pair in self.pairs],
            "roles": list(self.roles),
            "learnt_from": self.learnt_from,
            "aimed": self.aimed,
        }

    def restore(self, state: dict, rerun: object = None) -> None:
        """The pairs and roles saved: nothing needs running again."""
        self.pairs = [RacingPair.from_json(saved) for saved in state.get("pairs", [])]
        self.roles = [str(role) for role in state.get("roles", [])]
        self.learnt_from = int(state.get("learnt_from", 0))
        self.aimed = int(state.get("aimed", 0))
