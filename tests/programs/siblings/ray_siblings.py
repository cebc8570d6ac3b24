"""A Ray driver that imports a sibling module."""

import ray

import tally
from tools.numbers import plus_one


@ray.remote
def increment(value: int) -> int:
    return plus_one(value)


def main() -> None:
    ray.init()
    assert tally.bump() == 1, f"tally.runs is {tally.runs}: an earlier execution's state leaked in"
    assert ray.get(increment.remote(1)) == 2
    ray.shutdown()
