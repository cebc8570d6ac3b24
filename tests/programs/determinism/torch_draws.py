"""Draws from torch's global generator: the value must follow the execution's seed choice."""

import torch


def main() -> None:
    drawn = torch.rand(2).tolist() + [torch.randint(0, 10**9, (1,)).item()]
    raise AssertionError(f"drew {drawn}")
