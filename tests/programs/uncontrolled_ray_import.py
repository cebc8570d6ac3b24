"""A Ray program whose module imports an unmodelled part of Ray at its top level."""

import ray
from ray.util import collective  # noqa: F401


def main() -> None:
    ray.init()
