"""The random strategy's scheduling draw is ``random.Random(seed).randrange``'s, on every Python.

``RandomChooser.next_agent`` draws with ``getrandbits`` itself (one call
less at every scheduling point); a seed must still give the schedules it
gave before, so its draws are compared with randrange's.
"""

from __future__ import annotations

import random

from dnsse.search.random_walk import RandomChooser


def test_each_draw_is_what_randrange_draws_from_the_same_seed() -> None:
    for seed in range(20):
        chooser, reference = RandomChooser(seed), random.Random(seed)
        for step in range(500):
            options = 2 + (step * 7 + seed) % 13  # 2 to 14 agents, powers of two among them
            assert chooser.next_agent(range(options), None, step) == reference.randrange(options)
