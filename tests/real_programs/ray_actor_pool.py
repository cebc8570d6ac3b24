"""``ray.util.ActorPool`` over stateful actors, as in Ray's documentation.

``run`` pairs each input with its result through ``map``, which returns
results in submission order. ``run_unordered`` uses ``map_unordered`` for
speed but still zips its results with the inputs, assuming their order:
whenever a later call finishes first, results are paired with the wrong
inputs.
"""

import ray
from ray.util import ActorPool


@ray.remote
class Tokenizer:
    def __init__(self):
        self.calls = 0

    def count_tokens(self, text):
        self.calls += 1
        return len(text.split())


DOCUMENTS = ["a b", "c d e", "f"]


def _run(ordered: bool) -> None:
    ray.init()
    pool = ActorPool([Tokenizer.remote() for _ in range(2)])
    submit = lambda actor, text: actor.count_tokens.remote(text)  # noqa: E731 - as the docs write it
    results = pool.map(submit, DOCUMENTS) if ordered else pool.map_unordered(submit, DOCUMENTS)
    counts = dict(zip(DOCUMENTS, results))
    assert counts == {text: len(text.split()) for text in DOCUMENTS}, counts


def run() -> None:
    _run(ordered=True)


def run_unordered() -> None:
    _run(ordered=False)
