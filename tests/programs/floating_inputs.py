"""Branches that real arithmetic misses and IEEE floating point reaches."""

from typing import Annotated

import torch

import dnsse


def absorbed(x: Annotated[float, dnsse.Range(-1e40, 1e40)] = 1.0) -> None:
    """No real x has x + 1e16 == x; every double beyond about 1e32 does."""
    if x + 1e16 == x:
        raise AssertionError(f"1e16 vanished next to x={x}")


def half_cast(a: Annotated[float, dnsse.Range(0.0, 1000.0)] = 1.0) -> None:
    """In reals a float16 tensor times a equals a; in float16 it does not for most a (rounding)."""
    scaled = torch.ones(1, dtype=torch.float16) * a
    if scaled.item() != a:
        raise AssertionError(f"float16 rounded {a} to {scaled.item()}")


def half_overflow(a: Annotated[float, dnsse.Range(0.0, 100_000.0)] = 1.0) -> None:
    """Real arithmetic puts float16's overflow just above 65504; rounding puts it at 65520."""
    scaled = torch.ones(1, dtype=torch.float16) * a
    if scaled.item() > 65504.0:
        raise AssertionError(f"float16 overflow: {a} became {scaled.item()}")
