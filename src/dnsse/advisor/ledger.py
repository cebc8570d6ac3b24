"""Which kinds of hint paid off, so the next hints of that kind go first.

A hint's shape is what produced it (``window``, ``reverse``, ``boundary`` from
the offline advisor, ``model`` from a language model). The ledger keeps, per
shape, how many hints were tried and how many led to a bug or to behaviour no
run had shown; a hint's priority is its own confidence scaled by its shape's
payoff rate (Laplace-smoothed, so an untried shape starts at one half). A
shape not tried yet goes before every shape tried: one prolific heuristic
(hundreds of windows) must not keep the others from their first try.
"""

from __future__ import annotations

from collections import Counter

from dnsse.advisor.hints import Hint


def shape_of(hint: Hint) -> str:
    return hint.source if hint.source != "offline" else hint.reason.split(":", 1)[0]


class Ledger:
    def __init__(self) -> None:
        self.tried: Counter = Counter()
        self.useful: Counter = Counter()

    def record(self, hint: Hint, useful: bool) -> None:
        shape = shape_of(hint)
        self.tried[shape] += 1
        self.useful[shape] += int(useful)

    def payoff(self, shape: str) -> float:
        return (self.useful[shape] + 1) / (self.tried[shape] + 2)

    def priority(self, hint: Hint) -> float:
        shape = shape_of(hint)
        return hint.confidence * self.payoff(shape) + (1.0 if self.tried[shape] == 0 else 0.0)
