"""``random``: every choice uniformly at random (a random walk over schedules)."""

from __future__ import annotations

import random
from typing import Sequence

from dnsse.engine.inputs import is_open
from dnsse.search.strategy import Strategy, execution_seed


def blind_value(rng: random.Random, options: int) -> int:
    """A value drawn as the blind strategies draw (random, pct, pos): uniformly among ``options``.

    An open input (no Range) keeps its default: a blindly drawn int64 is a count no program takes.
    """
    return 0 if is_open(options) else rng.randrange(options)


class RandomChooser:
    __slots__ = ("rng", "_bits")

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self._bits = self.rng.getrandbits

    def next_agent(self, runnable: Sequence[int], current: int | None, step: int) -> int:
        # What randrange(n) draws for n > 0 (the engine offers two agents or more): the same calls of
        # getrandbits as Random._randbelow_with_getrandbits, without its checks and its own call.
        n = len(runnable)
        k = n.bit_length()
        bits = self._bits
        r = bits(k)
        while r >= n:
            r = bits(k)
        return r

    def next_value(self, kind: str, options: int) -> int:
        return blind_value(self.rng, options)


class RandomStrategy(Strategy):
    name = "random"

    def __init__(self, seed: int) -> None:
        self.seed = seed

    def chooser_for(self, execution: int) -> RandomChooser:
        return RandomChooser(execution_seed(self.seed, execution))

    def observe(self, result: object) -> None:
        """Random search does not learn: nothing to save for a resumed campaign either."""
